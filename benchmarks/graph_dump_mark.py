"""What pairing the graph dump with its store file costs: the meta read at open and the meta write per save.

Usage: .venv/bin/python benchmarks/graph_dump_mark.py STORE  (a copy: it writes ``graphdb.dump_mark``)
Times ``get_meta(MARK_META)`` (read once per projection start, graphdb/projection.py) and
``set_meta(MARK_META, …)`` (once per dump save), medians of 200 and 20 calls.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from neurongraph.graphdb.projection import MARK_META  # noqa: E402
from neurongraph.store.sqlite import SQLiteStore  # noqa: E402


def main(path: str) -> None:
    st = SQLiteStore(path)
    reads, writes = [], []
    try:
        for _ in range(200):
            t = time.perf_counter()
            st.get_meta(MARK_META)
            reads.append(time.perf_counter() - t)
        for i in range(20):
            t = time.perf_counter()
            st.set_meta(MARK_META, f"{i:032x}")
            writes.append(time.perf_counter() - t)
    finally:
        st.close()
    print(
        f"get_meta median {statistics.median(reads) * 1e6:.1f} us, "
        f"set_meta median {statistics.median(writes) * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
