"""The proof on a real cluster (issue 32, item 3): `kafka-assign demo`, both follower-fetching
modes, recorded with the machine and the date (optimizer/service/demo.py says what it runs and
measures).

Run: ./run python bench/demo.py [SECONDS]   (writes bench/results/demo.json; not a test; about
7 minutes per mode on a 2-core machine with 20-second windows)
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import date
from pathlib import Path

from optimizer.kafka.jvm import KAFKA_VERSION
from optimizer.service.demo import DemoOptions, run_demo, table

RESULTS = Path(__file__).parent / "results" / "demo.json"


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    results = run_demo(DemoOptions(seconds=seconds), progress=lambda line: print(line, file=sys.stderr, flush=True))
    results["machine"] = {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(), "kafka": KAFKA_VERSION}
    results["date"] = date.today().isoformat()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print("\n".join(table(results)))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
