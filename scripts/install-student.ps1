# Students on Windows: what scripts/install-student.sh does on Linux and macOS. Creates .venv at
# the repository root (once), installs PyTorch 2.13.0 (PyPI's Windows wheel is the CPU build),
# what the lessons need and the course package, and switches off nbgrader's instructor tools.
# Run it from the repository root in PowerShell (Windows PowerShell 5.1 or PowerShell 7):
#   powershell -ExecutionPolicy Bypass -File scripts\install-student.ps1
# Then: .venv\Scripts\Activate.ps1 ; jupyter lab notebooks\   (cmd.exe: .venv\Scripts\activate.bat)
$ErrorActionPreference = "Stop"
Set-Location (Split-Path -Parent $PSScriptRoot)

# Stops at the first failing command, as `set -e` does in the bash script.
function Invoke-Checked {
    param([string]$Program, [string[]]$Arguments)
    & $Program @Arguments
    if ($LASTEXITCODE -ne 0) { throw "Install stopped: $Program $($Arguments -join ' ') failed." }
}

# The same plugins and server extensions as scripts/student_tools.sh.
$InstructorLabPlugins = @(
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:menu"
)
$InstructorServerExtensions = @(
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
    "nbgrader.server_extensions.assignment_list"
)

# Python 3.10 or newer, from the py launcher (python.org's installer) or python on PATH.
if (Get-Command py -ErrorAction SilentlyContinue) { $SystemPython = @("py", "-3") }
elseif (Get-Command python -ErrorAction SilentlyContinue) { $SystemPython = @("python") }
else { throw "Python 3.10 or newer is needed: install it from https://www.python.org/downloads/ (tick 'Add python.exe to PATH')." }
$PythonArgs = @($SystemPython | Select-Object -Skip 1)
& $SystemPython[0] @PythonArgs -c "import sys; sys.exit(sys.version_info < (3, 10))"
if ($LASTEXITCODE -ne 0) { throw "Python 3.10 or newer is needed; $($SystemPython -join ' ') is older." }

if (-not (Test-Path ".venv\Scripts\python.exe")) {
    Invoke-Checked $SystemPython[0] ($PythonArgs + @("-m", "venv", ".venv"))
}
$Python = ".venv\Scripts\python.exe"
Invoke-Checked $Python @("-m", "pip", "install", "--quiet", "--upgrade", "pip")
Invoke-Checked $Python @("scripts\install_torch.py")
Invoke-Checked $Python @("-m", "pip", "install", "--quiet", "-r", "requirements.txt")
# -qq: the editable build's only messages are setuptools' notes on editable layouts; errors still show.
Invoke-Checked $Python @("-m", "pip", "install", "-qq", "--no-deps", "-e", ".")

$Jupyter = ".venv\Scripts\jupyter.exe"
Invoke-Checked $Jupyter (@("labextension", "disable", "--level=sys_prefix", "--log-level=WARN") + $InstructorLabPlugins)
Invoke-Checked $Jupyter (@("labextension", "lock", "--level=sys_prefix", "--log-level=WARN") + $InstructorLabPlugins)
# Quiet, as in the bash script (Windows PowerShell would turn their redirected output into errors).
$ErrorActionPreference = "Continue"
foreach ($Extension in $InstructorServerExtensions) {
    & $Jupyter server extension disable --sys-prefix $Extension *> $null
}
$ErrorActionPreference = "Stop"
# Untouched lessons close without a save prompt on any Python (scripts/student_tools.sh says why).
Invoke-Checked $Python @("-m", "transformer_course.lesson_contents", "sys_prefix")
# No backslash before a closing quote: Windows would read it as an escaped quote.
Invoke-Checked $Python @("scripts\check_environment.py", "--next", ".venv\Scripts\Activate.ps1 ; jupyter lab notebooks")
