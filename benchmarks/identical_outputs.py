"""Byte-identical outputs: a check that a change of the code leaves every parse as it was.

For every registered transition system (:data:`neuralparse.systems.SYSTEMS`) this trains a
small model deterministically (the ``model=small`` preset, the system's preset options, a
fixed seed, a few hundred training sentences, CPU, one thread) and parses the dev set of each
shared treebank (the first ``--dev-sentences`` sentences) with greedy and with beam search,
through the library's public prediction path (``Parser.parse_file``, tags predicted).  The
SHA-256 of every output file is recorded (``--record FILE``) or compared with a record
(``--check FILE``: exit status 1 and the list of differences when any output differs)::

    python -m benchmarks.identical_outputs --record outputs/identical_outputs.json
    python -m benchmarks.identical_outputs --check outputs/identical_outputs.json

Float arithmetic differs between CPUs (a kernel for AVX512 sums in another order than one for
AVX2), so a record made on one machine need not match any code on another: the record names
its CPU, and ``--check`` says so when this machine's differs.  ``--against REV`` avoids
records altogether: it runs this script on the library of commit ``REV`` (a ``git archive``
of it, in a subprocess) and then on the working tree, both here, and compares the two::

    python -m benchmarks.identical_outputs --against HEAD      # uncommitted changes
    python -m benchmarks.identical_outputs --against main~3    # the last three commits too

The record also keeps each output's UAS against the gold dev trees, to show that the model is
trained (a parse that only shifts would be identical too).  Treebanks missing under the data
root (:func:`neuralparse.datasets.data_root`, or ``--data-root``) are skipped with a message.
The script uses only the library's configuration, training and prediction API, so the same
file can be run against an older checkout (``PYTHONPATH=OLD python -m
benchmarks.identical_outputs ...`` from that checkout) to record a baseline.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

SHARED_TREEBANKS = (
    "UD_English-EWT",
    "UD_Greek-GDT",
    "UD_Gothic-PROIEL",
    "UD_Hungarian-Szeged",
    "UD_Turkish-IMST",
)
"""The five shared treebanks whose dev sets are parsed."""


def sentence_blocks(path: Path) -> Iterator[str]:
    """The sentences of a CoNLL-U file as their exact text (comment and token lines and the
    blank line that ends each)."""
    block: list[str] = []
    with path.open(encoding="utf-8", newline="") as lines:
        for line in lines:
            block.append(line)
            if not line.strip():
                if any(part.strip() for part in block):
                    yield "".join(block)
                block = []
    if any(part.strip() for part in block):
        yield "".join(block)


def head_file(source: Path, count: int, dest: Path) -> int:
    """Copy the first ``count`` sentences of ``source`` byte for byte into ``dest``; returns
    how many were copied."""
    copied = 0
    with dest.open("w", encoding="utf-8", newline="") as out:
        for block in sentence_blocks(source):
            if copied == count:
                break
            out.write(block)
            copied += 1
    return copied


def cpu_description() -> dict[str, str]:
    """This machine's CPU: its model name and the instruction set torch's kernels use (the
    library's :func:`~neuralparse.runtime.devices.describe_machine`, read here so that older
    libraries, which lack those fields, are described alike)."""
    import torch

    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"model": model, "capability": torch.backends.cpu.get_cpu_capability()}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def uas(gold: Path, predicted: Path) -> float:
    """Unlabeled attachment score (percent, every word) of ``predicted`` against ``gold``."""
    from neuralparse.io import read_conllu

    right = total = 0
    for g, p in zip(read_conllu(gold), read_conllu(predicted), strict=True):
        right += sum(a == b for a, b in zip(g.heads, p.heads, strict=True))
        total += len(g.heads)
    return round(100.0 * right / max(total, 1), 2)


def system_options(name: str) -> dict[str, Any]:
    """The options of the system's preset ``neuralparse/conf/system/NAME.yaml`` (what
    ``train.py system=NAME`` uses), or none when it has no preset."""
    from omegaconf import OmegaConf

    source = resources.files("neuralparse.conf") / "system" / f"{name}.yaml"
    if not source.is_file():
        return {}
    preset = OmegaConf.create(source.read_text(encoding="utf-8"))
    return dict(OmegaConf.to_container(preset.get("options") or OmegaConf.create({})))


def train_config(system: str, train: Path, dev: Path, args: argparse.Namespace) -> Any:
    """The training configuration: the small model preset, CPU, one thread, a fixed seed."""
    from omegaconf import OmegaConf

    from neuralparse.config import TrainConfig, preset_model_config

    cfg = OmegaConf.structured(TrainConfig)
    cfg.seed = args.seed
    cfg.data.treebank = None
    cfg.data.train, cfg.data.dev, cfg.data.test = str(train), str(dev), None
    cfg.system.name = system
    cfg.system.options = system_options(system)
    cfg.model = OmegaConf.structured(preset_model_config("small"))
    cfg.trainer.max_epochs = args.epochs
    cfg.trainer.batch_tokens = args.batch_tokens
    cfg.trainer.device = "cpu"
    cfg.trainer.threads = args.threads
    cfg.trainer.progress = False
    cfg.trainer.evaluate_test = False
    return cfg


def library_commit(library: Path) -> str | None:
    """The commit of the checkout that holds ``library`` (None outside a git checkout)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(library), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def treebank_root(args: argparse.Namespace) -> Path:
    """The UD data root the run reads: ``--data-root``, else the library's default."""
    from neuralparse.datasets import data_root

    return Path(args.data_root) if args.data_root else data_root()


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Train and parse; returns the record (settings and ``outputs``)."""
    import torch

    import neuralparse
    from neuralparse.api import Parser
    from neuralparse.systems import SYSTEMS
    from neuralparse.training.trainer import train

    torch.set_num_threads(args.threads)
    root = treebank_root(args)
    systems = args.systems or list(SYSTEMS)
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        raise SystemExit(f"unknown system(s) {unknown}; known: {sorted(SYSTEMS)}")
    library = Path(neuralparse.__file__).resolve().parent
    print(f"library: {library}; data root: {root}", file=sys.stderr)

    train_dir = root / args.train_treebank
    train_file, train_dev = work / "train.conllu", work / "train_dev.conllu"
    head_file(train_dir / "train.conllu", args.train_sentences, train_file)
    head_file(train_dir / "dev.conllu", args.train_dev_sentences, train_dev)
    inputs: dict[str, Path] = {}
    for treebank in args.treebanks:
        source = root / treebank / "dev.conllu"
        if not source.is_file():
            print(f"skipped {treebank}: no {source}", file=sys.stderr)
            continue
        inputs[treebank] = work / f"{treebank}.dev.conllu"
        head_file(source, args.dev_sentences, inputs[treebank])

    outputs: dict[str, dict[str, Any]] = {}
    for system in systems:
        started = time.perf_counter()
        result = train(train_config(system, train_file, train_dev, args), work / system)
        parser = Parser.load(result.checkpoint, device="cpu")
        for treebank, source in inputs.items():
            for search, beam in (("greedy", 1), ("beam", args.beam)):
                dest = work / system / f"{treebank}.{search}.conllu"
                options = {"search": search, "tags": "predict", "workers": 0}
                if search == "beam":
                    options["beam_size"] = beam
                parser.parse_file(source, dest, **options)
                outputs[f"{system}/{treebank}/{search}"] = {
                    "sha256": sha256(dest),
                    "uas": uas(source, dest),
                }
        seconds = time.perf_counter() - started
        print(f"{system}: trained and parsed in {seconds:.1f}s", file=sys.stderr)
    return {
        "library": str(library),
        "library_version": neuralparse.__version__,
        "commit": args.commit or library_commit(library),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": cpu_description(),
        "settings": {
            "systems": systems,
            "train_treebank": args.train_treebank,
            "train_sentences": args.train_sentences,
            "train_dev_sentences": args.train_dev_sentences,
            "dev_sentences": args.dev_sentences,
            "treebanks": list(inputs),
            "epochs": args.epochs,
            "batch_tokens": args.batch_tokens,
            "beam": args.beam,
            "seed": args.seed,
            "threads": args.threads,
            "model": "small",
        },
        "outputs": outputs,
    }


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """One line per output whose hash differs from the record, or that is on one side only."""
    lines = []
    for key in sorted(set(expected) | set(actual)):
        if key not in actual:
            lines.append(f"{key}: in the record, not produced")
        elif key not in expected:
            lines.append(f"{key}: produced, not in the record")
        elif expected[key]["sha256"] != actual[key]["sha256"]:
            lines.append(
                f"{key}: sha256 {actual[key]['sha256'][:16]}... differs from the record's "
                f"{expected[key]['sha256'][:16]}... (UAS {actual[key]['uas']} vs "
                f"{expected[key]['uas']})"
            )
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from neuralparse.systems import SYSTEMS

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.identical_outputs", description=__doc__.split("\n")[0]
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", metavar="FILE", help="write the hashes to FILE (JSON)")
    mode.add_argument("--check", metavar="FILE", help="compare with the hashes of FILE")
    mode.add_argument(
        "--against", metavar="REV", help="compare with the library of commit REV, run here"
    )
    parser.add_argument("--systems", nargs="+", metavar="NAME", help=f"of {list(SYSTEMS)}")
    parser.add_argument("--data-root", help="the UD data root (default: data_root())")
    parser.add_argument("--treebanks", nargs="+", default=list(SHARED_TREEBANKS))
    parser.add_argument("--train-treebank", default="UD_English-EWT")
    parser.add_argument("--train-sentences", type=int, default=1000)
    parser.add_argument("--train-dev-sentences", type=int, default=50)
    parser.add_argument("--dev-sentences", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-tokens", type=int, default=200, help="words per update")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--commit", help="the commit to record (default: git rev-parse HEAD)")
    parser.add_argument("--note", help="a remark to record, e.g. how the library was chosen")
    parser.add_argument("--workdir", help="keep the models and outputs here (default: a temp dir)")
    return parser.parse_args(argv)


SETTING_OPTIONS = (
    "systems", "treebanks", "train_treebank", "train_sentences",
    "train_dev_sentences", "dev_sentences", "epochs", "batch_tokens", "beam", "seed", "threads",
)  # fmt: skip
"""The options that decide the outputs: ``--against`` passes them on to the base commit's run
(and the data root, made absolute)."""


def record_of_commit(rev: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The record of the library of commit ``rev`` of this repository, made here by this
    script in a subprocess on a ``git archive`` of the commit (so that only the library
    differs between the two runs)."""
    repository = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "-C", str(repository), "rev-parse", "--verify", f"{rev}^{{commit}}"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(f"--against {rev}: not a commit of the repository {repository}") from None
    base = work / f"base-{commit[:12]}"
    (base / "benchmarks").mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(repository), "archive", commit], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    # This script, not the commit's own (which may be older or absent), drives its library.
    for name in ("__init__.py", "identical_outputs.py"):
        (base / "benchmarks" / name).write_bytes((Path(__file__).parent / name).read_bytes())
    record = work / f"record-{commit[:12]}.json"
    command = [sys.executable, "-m", "benchmarks.identical_outputs", "--record", str(record)]
    # The run's directory is the archive: a relative data root would resolve there.
    command += ["--commit", commit, "--data-root", str(treebank_root(args).resolve())]
    for option in SETTING_OPTIONS:
        value = getattr(args, option)
        if value is not None:
            flag = "--" + option.replace("_", "-")
            command += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    print(f"the library of {rev} ({commit[:12]}), from a git archive:", file=sys.stderr)
    environment = {**os.environ, "PYTHONPATH": str(base)}
    done = subprocess.run(command, cwd=base, env=environment)
    if done.returncode != 0:
        raise SystemExit(f"--against {rev}: the run on that commit's library failed")
    print("the working tree:", file=sys.stderr)
    return json.loads(record.read_text(encoding="utf-8"))


def compare(
    expected: dict[str, Any], record: dict[str, Any], name: str, args: argparse.Namespace
) -> int:
    """Print whether ``record``'s outputs equal ``expected``'s (those of the systems and
    treebanks asked for, when a subset was run); 1 when any differs."""
    wanted = {
        key: value
        for key, value in expected["outputs"].items()
        if key.split("/")[1] in args.treebanks
        and (not args.systems or key.split("/")[0] in args.systems)
    }
    settings = dict(expected.get("settings") or {})
    if args.systems:
        settings["systems"] = record["settings"]["systems"]
    if set(args.treebanks) != set(SHARED_TREEBANKS):
        settings["treebanks"] = record["settings"]["treebanks"]
    if settings != record["settings"]:
        print(f"note: settings differ from the record's: {expected.get('settings')}")
    if expected.get("cpu") != record["cpu"]:
        made_on = "a CPU it does not name"
        if expected.get("cpu"):
            made_on = "{model} ({capability})".format(**expected["cpu"])
        here = "{model} ({capability})".format(**record["cpu"])
        print(
            f"note: {name} was made on {made_on}, this machine is {here}: float arithmetic "
            "may differ between them, and outputs with it; --against REV compares on one machine"
        )
    lines = differences(wanted, record["outputs"])
    if lines:
        print(f"{len(lines)} of {len(record['outputs'])} outputs differ from {name}:")
        print("\n".join(f"  {line}" for line in lines))
        return 1
    print(f"all {len(record['outputs'])} outputs identical to {name}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("neuralparse").setLevel(logging.WARNING)
    # English-EWT dev has enhanced graphs, which prediction (deps=clear) warns of at every
    # parse of it: expected here, and they would bury the result.
    logging.getLogger("neuralparse.predict").setLevel(logging.ERROR)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="identical_outputs_") as temporary:
        expected = None
        if args.against:
            expected = record_of_commit(args.against, args, Path(temporary))
        work = Path(args.workdir) if args.workdir else Path(temporary) / "work"
        work.mkdir(parents=True, exist_ok=True)
        record = run(args, work)
    given = sys.argv[1:] if argv is None else list(argv)
    command = shlex.join(["python", "-m", "benchmarks.identical_outputs", *given])
    record = {
        "command": command,
        "note": args.note,
        "seconds": round(time.perf_counter() - started, 1),
    } | record
    if args.record:
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
        Path(args.record).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"{len(record['outputs'])} output hashes written to {args.record}")
        return 0
    if expected is not None:
        return compare(expected, record, f"the library of {args.against}", args)
    expected = json.loads(Path(args.check).read_text(encoding="utf-8"))
    return compare(expected, record, args.check, args)


if __name__ == "__main__":
    sys.exit(main())
