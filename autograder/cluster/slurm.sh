#!/usr/bin/env bash
# Grade one lesson's LMS zip on a Slurm cluster: a job array of N shards, then a merge job that
# starts only when every shard succeeded. Run from the repository root on a login node, the
# repository (with .venv from `bash scripts/install.sh`) on a filesystem every node sees:
#
#   bash autograder/cluster/slurm.sh LESSON ZIP N [sbatch options for the shards...]
#   bash autograder/cluster/slurm.sh 03_attention submissions.zip 8 --partition=cpu
#
# Each array task k runs `python -m course_build.grade LESSON --zip ZIP --shard k/N` in its own
# folder autograder/shards/LESSON/k-of-N (it never writes the course); the merge job runs
# `python -m course_build.merge LESSON`, which writes the gradebook, feedback and grades.csv.
# If a task fails, the merge job never starts (Slurm: DependencyNeverSatisfied): cancel it, run
# that shard again (`srun -c 8 --mem=40G python -m course_build.grade LESSON --zip ZIP --shard k/N`),
# then `python -m course_build.merge LESSON`. Each task uses every core and the memory Slurm grants it (default_jobs): one
# grading process per core while each has 5 GiB (a kernel's 4 GiB limit and 1 GiB beside it).
# Book: book/instructors.md, "A class on a cluster".
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bash autograder/cluster/slurm.sh LESSON ZIP N [sbatch options]" >&2
  exit 2
fi
lesson=$1 zip=$(realpath "$2") shards=$3
shift 3
case $shards in '' | *[!0-9]* | 0) echo "N must be a whole number of shards, at least 1: $shards" >&2; exit 2 ;; esac
repo=$(pwd)
q_lesson=$(printf %q "$lesson") q_zip=$(printf %q "$zip") q_repo=$(printf %q "$repo")

job=$(sbatch --parsable "$@" <<EOF_SHARDS
#!/usr/bin/env bash
#SBATCH --job-name=grade-$lesson
#SBATCH --array=1-$shards
#SBATCH --cpus-per-task=8
#SBATCH --mem=40G
#SBATCH --time=04:00:00
set -euo pipefail
cd $q_repo
source .venv/bin/activate
python -m course_build.grade $q_lesson --zip $q_zip --shard "\${SLURM_ARRAY_TASK_ID}/$shards"
EOF_SHARDS
)
echo "shards: job array $job (1-$shards)"

sbatch --parsable --dependency="afterok:$job" <<EOF_MERGE
#!/usr/bin/env bash
#SBATCH --job-name=merge-$lesson
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --time=01:00:00
set -euo pipefail
cd $q_repo
source .venv/bin/activate
python -m course_build.merge $q_lesson
EOF_MERGE
echo "merge: runs when every shard of job $job succeeded (squeue -u \$USER shows both)"
