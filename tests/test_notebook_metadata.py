"""Generated notebooks carry the language_info JupyterLab writes: untouched lessons open unmodified."""

import json

import pytest
from ipykernel.ipkernel import IPythonKernel
from jupyter_client.kernelspec import KernelSpecManager

from course_build.authoring.source import (
    COURSE_PYTHON_VERSION,
    KERNELSPEC,
    LANGUAGE_INFO,
    build_source_notebook,
)
from course_build.paths import lesson_names, nbgrader_source_notebook, solution_notebook, student_notebook


def test_language_info_is_what_ipykernel_reports_on_the_course_python():
    # JupyterLab replaces the notebook's language_info with the kernel's on opening and marks the
    # notebook modified when the two differ in any field.
    assert LANGUAGE_INFO == {**IPythonKernel.language_info, "version": COURSE_PYTHON_VERSION}


def test_the_kernelspec_is_the_installed_python3_kernels():
    spec = KernelSpecManager().get_kernel_spec("python3")
    assert KERNELSPEC == {"name": "python3", "display_name": spec.display_name, "language": spec.language}


@pytest.mark.parametrize("lesson", lesson_names())
def test_every_generated_notebook_carries_the_full_language_info(lesson):
    source = build_source_notebook(lesson)
    assert source.metadata["language_info"] == LANGUAGE_INFO and source.metadata["kernelspec"] == KERNELSPEC
    for path in (student_notebook(lesson), solution_notebook(lesson), nbgrader_source_notebook(lesson)):
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        assert (metadata["language_info"], metadata["kernelspec"]) == (LANGUAGE_INFO, KERNELSPEC), path
