"""What files cost the server: memory for a large upload, and time for a message that
carries an image, against a text-only message in the same run.

One ``agentstream serve`` process (uvicorn on loopback, SQLite store and attachment files in a
temporary directory) answers on ``openai:gpt-4o-mini`` through the official OpenAI SDK, pointed
at a local fake of the Chat Completions API that answers at once (``tests/providers/fakes``),
so what is measured is the server's own work, the vendor's request built and sent included.

* upload: ``--uploads`` files of ``--mib`` MiB each (text, which the server takes up to its
  limit, set above the file's size) streamed to ``POST /api/attachments``; the server's peak
  resident memory (``VmHWM``) and resident memory (``VmRSS``) before and after each;
* first token: ``--runs`` messages of each kind, alternating, over the tray protocol: request
  written -> the answer's first token (p50/p90 in ms), text-only against the same text with
  one ``--image-kib`` KiB PNG (uploaded once, named by every message: the server reads it,
  encodes it and sends it in the vendor's request every time). Each message starts a new
  conversation, so history does not grow.

    .venv/bin/python bench/attachments.py [--mib 20] [--uploads 3] [--runs 100] [--image-kib 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.attachments.samples import encode_png  # noqa: E402
from tests.providers.fakes import FakeUpstream  # noqa: E402
from tests.providers.fakes import openai as fake_openai  # noqa: E402
from tests.server.helpers import serving  # noqa: E402

MIB = 1024 * 1024


def memory(pid: int) -> tuple[int, int]:
    """The process's peak and current resident memory, in KiB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmHWM"].split()[0]), int(fields["VmRSS"].split()[0])


def text_file(path: Path, size: int) -> Path:
    """``size`` bytes of CSV at ``path`` (streamed from disk by the client)."""
    row = b"north,Q3,1200,800,steady growth\n" * 1000
    with path.open("wb") as out:
        out.write(b"region,quarter,revenue,cost,note\n")
        while out.tell() < size:
            out.write(row[: size - out.tell()])
    return path


def png(kib: int) -> bytes:
    """A real PNG of about ``kib`` KiB (noise does not compress)."""
    side = max(8, int((kib * 1024 / 3) ** 0.5))
    seed = 12345
    rows = bytearray()
    for _ in range(side):
        rows.append(0)
        for _ in range(side * 3):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            rows.append(seed >> 16 & 0xFF)
    return encode_png(side, side, bytes(rows), level=1)


def first_token_ms(client: httpx.Client, body: dict[str, object]) -> float:
    began = time.perf_counter()
    with client.stream("POST", "/api/chat/stream", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: ") and json.loads(line[6:]).get("type") == "text_delta":
                return (time.perf_counter() - began) * 1000
    raise RuntimeError("the answer had no text")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=20)
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--image-kib", type=int, default=200)
    args = parser.parse_args()

    upstream = FakeUpstream().start()
    for _ in range(2 * args.runs + 10):
        upstream.replies.append(fake_openai.text("Seen", " it."))
    with tempfile.TemporaryDirectory() as home:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")},
            **fake_openai.env(upstream),
            "AGENTSTREAM_MODEL": "openai:gpt-4o-mini",
            "AGENTSTREAM_DATA_DIR": str(Path(home) / "data"),
            "AGENTSTREAM_MAX_ATTACHMENT_BYTES": str((args.mib + 1) * MIB),
            "PYTHONPATH": str(ROOT),
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "agentstream.cli", "serve", "--port", "0"],
            cwd=home,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        with serving(process) as url, httpx.Client(base_url=url, timeout=120) as client:
            print(f"upload: {args.uploads} x {args.mib} MiB (server memory in MiB)")
            large = text_file(Path(home) / "figures.csv", args.mib * MIB)
            for n in range(args.uploads):
                peak_before, rss_before = memory(process.pid)
                began = time.perf_counter()
                with large.open("rb") as content:
                    files = {"file": ("figures.csv", content, "text/csv")}
                    response = client.post("/api/attachments", files=files)
                took = time.perf_counter() - began
                assert response.status_code == 201, response.text
                peak_after, rss_after = memory(process.pid)
                print(
                    f"  #{n + 1}: peak {peak_before / 1024:.1f} -> {peak_after / 1024:.1f} "
                    f"(+{(peak_after - peak_before) / 1024:.1f}), "
                    f"resident {rss_before / 1024:.1f} -> {rss_after / 1024:.1f}, "
                    f"{args.mib / took:.0f} MiB/s"
                )

            image = client.post(
                "/api/attachments", files={"file": ("chart.png", png(args.image_kib), "image/png")}
            )
            assert image.status_code == 201, image.text
            shown = image.json()
            print(
                f"first token: {args.runs} messages of each kind, alternating "
                f"(image {shown['size'] / 1024:.0f} KiB)"
            )
            text_only: list[float] = []
            with_image: list[float] = []
            question = {"message": "What does the chart show?"}
            first_token_ms(client, question)  # warm up: imports, connections, the first row
            first_token_ms(client, {**question, "attachments": [shown["id"]]})
            for _ in range(args.runs):
                text_only.append(first_token_ms(client, question))
                with_image.append(
                    first_token_ms(client, {**question, "attachments": [shown["id"]]})
                )
            sent = [r for r in upstream.requests if r.path == "/v1/chat/completions"]
            assert any("image_url" in r.body.decode() for r in sent), "no image reached the model"
            for name, samples in (("text only", text_only), ("one image", with_image)):
                print(
                    f"  {name:10} p50 {statistics.median(samples):6.2f} ms  "
                    f"p90 {percentile(samples, 0.9):6.2f} ms"
                )
            print(
                "  difference p50 "
                f"{statistics.median(with_image) - statistics.median(text_only):+.2f} ms"
            )
    upstream.stop()


if __name__ == "__main__":
    main()
