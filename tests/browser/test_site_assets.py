"""course_site.site_assets without a browser: what it copies and how it configures the pages."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from course_build.paths import REPO_ROOT
from course_site import site_assets

NODE_MODULES = REPO_ROOT / "node_modules"


def copy_all(modules: Path, static: Path) -> int:
    return sum(site_assets.copy_asset(modules, asset, static) for asset in site_assets.ASSETS)


def test_a_missing_package_is_named_in_the_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="mathjax"):
        site_assets.copy_asset(tmp_path / "node_modules", site_assets.ASSETS[0], tmp_path / "_static")


def test_mathjax_keeps_its_folder_layout_below_the_entry_script(tmp_path):
    """MathJax loads components relative to its own URL, so the tree below es5/ must survive."""
    package = tmp_path / "node_modules" / "mathjax" / "es5"
    mathjax = next(a for a in site_assets.ASSETS if a.package == "mathjax")
    for relative in mathjax.paths:
        target = package / relative.removeprefix("es5/")
        if target.suffix == ".js":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("// entry")
        else:
            target.mkdir(parents=True, exist_ok=True)
            (target / "component.js").write_text("// component")
    copied = site_assets.copy_asset(tmp_path / "node_modules", mathjax, tmp_path / "_static")
    vendor = tmp_path / "_static" / site_assets.VENDOR_DIR / "mathjax"
    assert (tmp_path / "_static" / site_assets.MATHJAX_ENTRY).is_file()
    assert (vendor / "input" / "tex" / "extensions" / "component.js").is_file()
    assert (vendor / "output" / "chtml" / "fonts" / "woff-v2" / "component.js").is_file()
    assert copied == len(mathjax.paths)


def test_pages_are_pointed_at_the_local_copies():
    config = SimpleNamespace(mathjax_path="https://cdn", nb_ipywidgets_js={}, html_context={})
    site_assets.point_to_local_copies(None, config)
    scripts = [path for path in config.nb_ipywidgets_js if path]
    assert config.mathjax_path == site_assets.MATHJAX_ENTRY
    assert scripts == [site_assets.REQUIREJS_ENTRY, site_assets.WIDGETS_ENTRY]
    assert not any("://" in path for path in [config.mathjax_path, *scripts])
    # the inline setup script comes first: RequireJS reads its configuration when it loads
    assert next(iter(config.nb_ipywidgets_js)) == ""
    assert config.html_context["default_mode"] == "auto"


def test_duplicate_scripts_are_dropped_in_order():
    def script(filename, **attributes):
        return SimpleNamespace(filename=filename, attributes=attributes)

    first, copy, other = script(None, body="const A = 1"), script(None, body="const A = 1"), script("x.js")
    context = {"script_files": [first, other, copy]}
    site_assets.drop_duplicate_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] == [first, other]


def test_every_file_the_pages_load_is_copied_from_node_modules(tmp_path):
    if not (NODE_MODULES / "mathjax").is_dir():
        pytest.skip("node_modules/ is missing: run `npm ci` at the repository root")
    static = tmp_path / "_static"
    copy_all(NODE_MODULES, static)
    for entry in (site_assets.MATHJAX_ENTRY, site_assets.REQUIREJS_ENTRY, site_assets.WIDGETS_ENTRY):
        assert (static / entry).is_file(), entry
    # the widget bundle's CSS names its Font Awesome files by hash; all must sit beside it
    bundle = (static / site_assets.WIDGETS_ENTRY).read_text(encoding="utf-8")
    fonts = set(re.findall(r"[0-9a-f]{20}\.(?:woff2|woff|ttf|eot|svg)", bundle))
    assert fonts, "no font names found in the widget bundle"
    assert {f for f in fonts if not (static / site_assets.VENDOR_DIR / "html-manager" / f).is_file()} == set()
    assert any((static / site_assets.VENDOR_DIR / "mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))
