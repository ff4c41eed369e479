"""Images (issue 40): what the turn's worker thread spends on one image (server/agent/images.py
`prepare`: Pillow decodes, downscales, re-encodes) and what a request with 8 images costs to build
(agent/provider/wire_responses.py with the data URLs read back from the image store).

Cases: a 1920x1080 screenshot-like PNG (kept as it is), a 3840x2160 one (downscaled to 2048 px),
a 4000x3000 photo-like JPEG (downscaled, JPEG again). Median, min and max of --runs runs.

Run: python bench/images.py [--runs 20] [--out PATH]   Writes bench/results/images.json.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from PIL import Image, ImageDraw  # noqa: E402

from shiro_neko.agent import images  # noqa: E402
from shiro_neko.agent.provider.base import ProviderRequest  # noqa: E402
from shiro_neko.agent.provider.wire_responses import request_body  # noqa: E402
from shiro_neko.model.transcript import TextPart, UserMessage  # noqa: E402
from shiro_neko.state.image_store import ImageStore  # noqa: E402


def screenshot(width: int, height: int, seed: int = 1) -> bytes:
    """Flat colours, text-like strokes: a screenshot compresses as one does."""
    image = Image.new("RGB", (width, height), (30, 30, 30))
    draw = ImageDraw.Draw(image)
    rng = random.Random(seed)
    for y in range(0, height, 18):
        x = 10
        while x < width - 40:
            w = rng.randint(8, 60)
            draw.rectangle((x, y + 4, x + w, y + 12), fill=(rng.randint(120, 255), rng.randint(120, 255), 200))
            x += w + 8
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def photo(width: int, height: int) -> bytes:
    rng = random.Random(2)
    small = Image.frombytes("RGB", (width // 8, height // 8), bytes(rng.randrange(256) for _ in range(width // 8 * height // 8 * 3)))
    out = io.BytesIO()
    small.resize((width, height), Image.Resampling.BILINEAR).save(out, "JPEG", quality=90)
    return out.getvalue()


def timed(fn: Callable[[], Any], runs: int) -> dict[str, float]:
    fn()  # warm: Pillow's plugins load on first use
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return {"median_ms": round(statistics.median(times), 2), "min_ms": round(min(times), 2), "max_ms": round(max(times), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "images.json")
    args = parser.parse_args()
    cases = {"screenshot 1920x1080 png": screenshot(1920, 1080), "screenshot 3840x2160 png": screenshot(3840, 2160),
             "photo 4000x3000 jpeg": photo(4000, 3000)}
    result: dict[str, Any] = {"runs": args.runs, "python": platform.python_version(), "prepare": {}}
    for name, data in cases.items():
        raw = images.raw_image(data, name)
        prepared = images.prepare(raw)
        result["prepare"][name] = {"input_bytes": len(data), "output_bytes": len(prepared[0]),
                                   "output": f"{prepared[2]}x{prepared[3]} {prepared[1]}", **timed(lambda: images.prepare(raw), args.runs)}
    with tempfile.TemporaryDirectory() as home:
        store = ImageStore(lambda: Path(home))
        refs, _ = images.store(store, [images.raw_image(screenshot(1920, 1080, seed), f"shot{seed}") for seed in range(8)])
        assert len({r.name for r in refs}) == 8
        message = UserMessage(content=[TextPart(text="look")], images=refs)

        def build() -> None:
            request = ProviderRequest("gpt-5", "instructions", [message])
            request.images = images.load(store, refs)
            json.dumps(request_body(request, store=False))

        result["request with 8 images (load + body + json)"] = timed(build, args.runs)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
