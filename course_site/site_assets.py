"""Sphinx extension: the book serves MathJax, RequireJS and the widget manager itself.

By default a Jupyter Book page loads MathJax, RequireJS and ``@jupyter-widgets/html-manager``
from public CDNs, so a classroom behind a firewall (or any offline machine) sees raw LaTeX and
empty widget boxes. This extension copies the few files those libraries need from
``node_modules/`` (installed by ``npm ci`` from the repository's ``package-lock.json``) into
``_static/vendor/`` of the built site and points Sphinx's ``mathjax_path`` and myst-nb's
``nb_ipywidgets_js`` at them.

The files are copied into the *output* ``_static`` folder rather than listed in
``html_static_path``: Jupyter Book adds every JavaScript and CSS file of a source ``_static``
folder to every page, which would load megabytes of unused scripts on each page.

It also adds a small stylesheet of layout fixes for the course's pages (wide outputs scroll instead
of overflowing, plots shrink with the column, tables in widgets get borders). In dark mode the
theme already shows widgets and plots on a light card, which their black text and axes need.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Folder under the site's ``_static/`` that receives the copied files.
VENDOR_DIR = "vendor"
MATHJAX_ENTRY = f"{VENDOR_DIR}/mathjax/tex-mml-chtml.js"
REQUIREJS_ENTRY = f"{VENDOR_DIR}/requirejs/require.js"
WIDGETS_ENTRY = f"{VENDOR_DIR}/html-manager/embed-amd.js"
STYLESHEET = "course-site.css"

# Runs before the widget scripts on pages that show widgets.
WIDGET_PAGE_SETUP_JS = """\
// The widget bundle finds its CSS's Font Awesome files next to the URL RequireJS gives its module
// name, which by default resolves against the page's folder. A global `require` object set
// before require.js loads is RequireJS's configuration: map the name to the copied bundle.
window.require = {
  paths: {
    "@jupyter-widgets/html-manager/dist": new URL(
      (document.documentElement.dataset.content_root || "") + "_static/vendor/html-manager",
      document.baseURI
    ).href,
  },
};
// ipywidgets' controls typeset labels through MathJax 2's MathJax.Hub.Queue; the site runs
// MathJax 3, so bridge that one call to typesetPromise once MathJax has started.
document.addEventListener("DOMContentLoaded", function () {
  var mathjax = window.MathJax;
  if (!mathjax || mathjax.Hub || !mathjax.startup) {
    return;
  }
  mathjax.Hub = {
    Queue: function (command) {
      var element = command[2];
      mathjax.startup.promise.then(function () {
        return mathjax.typesetPromise([element]);
      });
    },
  };
});
"""


@dataclass(frozen=True)
class Asset:
    """Files of one npm package that the site serves, copied below ``_static/vendor``."""

    package: str
    destination: str
    #: Paths relative to the package folder; a folder is copied whole, a glob by pattern.
    paths: tuple[str, ...]


ASSETS = (
    # MathJax 3 loads extra components (TeX extensions, the menu, the CHTML fonts) from URLs
    # relative to its own script, so those folders travel with the combined component.
    Asset(
        "mathjax",
        "mathjax",
        (
            "es5/tex-mml-chtml.js",
            "es5/input/tex/extensions",
            "es5/input/mml/extensions",
            "es5/output/chtml/fonts/woff-v2",
            "es5/a11y",
            "es5/ui",
            "es5/sre",
        ),
    ),
    Asset("requirejs", "requirejs", ("require.js",)),
    # embed-amd.js bundles the base and controls widgets; its CSS refers to the Font Awesome
    # fonts webpack emitted beside it, resolved relative to the script's own URL.
    Asset(
        "@jupyter-widgets/html-manager",
        "html-manager",
        (
            "dist/embed-amd.js",
            "dist/*.woff2",
            "dist/*.woff",
            "dist/*.ttf",
            "dist/*.eot",
            "dist/*.svg",
        ),
    ),
)

# Layout and contrast fixes for what the course puts on its pages.
COURSE_CSS = """\
/* A wide widget (a table, a row of controls) scrolls inside its output area instead of
   pushing the page sideways on narrow screens. */
.cell_output .widget-subarea {
  max-width: 100%;
  overflow-x: auto;
}
/* Plots drawn into HTML widgets shrink with the column. */
.widget-html-content img,
.cell_output img {
  max-width: 100%;
  height: auto;
}
/* Tables inside widget HTML get light borders and padding; cells keep the widget's own
   alignment. */
.widget-html-content table {
  border-collapse: collapse;
  margin: 0.5em 0;
}
.widget-html-content th,
.widget-html-content td {
  border: 1px solid #c8c8c8;
  padding: 0.2em 0.6em;
}
"""


def node_modules_dir(app: Sphinx) -> Path:
    """The ``node_modules`` folder next to the book's ``_config.yml`` (the repository root)."""
    return Path(app.confdir) / "node_modules"


def point_to_local_copies(app: Sphinx, config: Config) -> None:
    """Make pages load MathJax and the widget scripts from ``_static/vendor``.

    Runs at ``config-inited`` so that Sphinx's MathJax support and myst-nb (which reads its
    configuration at ``builder-inited``) see the local paths.
    """
    config.mathjax_path = MATHJAX_ENTRY
    # pydata-sphinx-theme reads the reader's saved light/dark choice and falls back to this
    # context value; left empty, a first visit logs "Got invalid theme mode" as a console error.
    config.html_context = {"default_mode": "auto", **(config.html_context or {})}
    config.nb_ipywidgets_js = {
        "": {"body": WIDGET_PAGE_SETUP_JS},  # an inline script: no file
        REQUIREJS_ENTRY: {},
        # The bundle holds the base and controls widgets; only third-party widget modules (the
        # course has none) would be fetched from a CDN.
        WIDGETS_ENTRY: {},
    }


def _copy_path(source: Path, destination: Path) -> int:
    """Copy a file or a folder; returns how many files were copied."""
    if source.is_dir():
        shutil.copytree(source, destination, dirs_exist_ok=True)
        return sum(1 for path in destination.rglob("*") if path.is_file())
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)
    return 1


def copy_asset(modules: Path, asset: Asset, static_dir: Path) -> int:
    """Copy one package's files into ``static_dir/vendor/<destination>``.

    Raises ``FileNotFoundError`` naming the missing path when ``npm ci`` has not been run or the
    package's layout changed.
    """
    package_dir = modules / asset.package
    target_dir = static_dir / VENDOR_DIR / asset.destination
    copied = 0
    for relative in asset.paths:
        # Keep the layout below the entry script's folder: MathJax resolves its components
        # relative to the folder that holds tex-mml-chtml.js.
        strip = relative.split("/", 1)[0] + "/" if "/" in relative else ""
        if "*" in relative:
            matches = sorted(package_dir.glob(relative))
            if not matches:
                raise FileNotFoundError(f"{package_dir / relative} matches no file")
            for match in matches:
                copied += _copy_path(match, target_dir / match.name)
            continue
        source = package_dir / relative
        if not source.exists():
            raise FileNotFoundError(str(source))
        copied += _copy_path(source, target_dir / relative.removeprefix(strip))
    return copied


def copy_assets(app: Sphinx) -> None:
    """Copy the vendored scripts and the course stylesheet into the site before pages are written.

    Copying before pages are written lets Sphinx add its cache-busting checksum to each script
    URL. A missing ``node_modules`` is a warning (an error under ``-W``) that says how to fix it.
    """
    if app.builder is None or app.builder.format != "html":
        return
    static_dir = Path(app.outdir) / "_static"
    static_dir.mkdir(parents=True, exist_ok=True)
    (static_dir / STYLESHEET).write_text(COURSE_CSS, encoding="utf-8")
    modules = node_modules_dir(app)
    try:
        count = sum(copy_asset(modules, asset, static_dir) for asset in ASSETS)
    except FileNotFoundError as missing:
        logger.warning(
            "site_assets: %s is missing, so the site would load MathJax and the widget "
            "manager from nowhere. Run `npm ci` in %s (needs Node.js) and build again.",
            missing,
            app.confdir,
            type="site_assets",
        )
        return
    logger.info("site_assets: copied %d MathJax, RequireJS and widget files", count)


def drop_duplicate_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Keep the first of identical ``<script>`` entries of a page.

    sphinx-thebe registers its inline ``const THEBE_JS_URL = ...`` twice under Jupyter Book; the
    second copy is a SyntaxError in every page's console, which hides real errors.
    """
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        attributes = getattr(script, "attributes", {})
        key = (str(getattr(script, "filename", script) or ""), tuple(sorted(attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the handlers; the extension keeps no state, so parallel builds are safe."""
    app.connect("config-inited", point_to_local_copies)
    app.connect("builder-inited", copy_assets)
    # After myst-nb (priority 500) has added a page's widget scripts.
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.add_css_file(STYLESHEET)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
