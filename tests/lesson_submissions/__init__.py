"""Realistic submissions per lesson; ``BY_LESSON`` maps a lesson's name to its module."""

from lesson_submissions import (
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
)

BY_LESSON = {
    module.LESSON: module
    for module in (lesson02, lesson03, lesson04, lesson05, lesson06, lesson07, lesson08, lesson09, lesson10)
}
