"""``python -m benchmarks [name ...]``: run the benchmarks and print one table."""
import importlib
import platform
import sys

from benchmarks.harness import print_table

ALL = ["exact", "sim", "models", "pages", "load", "planner", "readers", "serving",
       "aiconfigurator", "planner_serving", "online"]


def main(argv: list[str]) -> int:
    names = argv or ALL
    unknown = [n for n in names if n not in ALL]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(ALL)}")
        return 2
    rows = []
    for name in names:
        rows += importlib.import_module(f"benchmarks.bench_{name}").run()
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}")
    print_table(rows)
    return 0 if all(r.met is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
