# The two set-up commands of the README (demo, test); each creates .venv and installs what it needs.
# `make bench` runs the published benchmarks (long: embeds the QA corpora on first run, then cached).
.PHONY: demo test bench

BENCH_DATA ?= ../shared/bench

demo:
	./scripts/bootstrap.sh
	HF_HUB_OFFLINE=1 .venv/bin/ngr demo --db .ngr/demo.db

test:
	./scripts/bootstrap.sh
	./scripts/lint.sh
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q

bench:
	./scripts/bootstrap.sh
	mkdir -p .ngr/results
	for d in musique_train200 hipporag_musique_train100 hipporag_hotpotqa_train100; do \
	  HF_HUB_OFFLINE=1 .venv/bin/ngr bench retrieval --dataset $(BENCH_DATA)/$$d --out .ngr/results/$$d.json || exit 1; \
	done
	HF_HUB_OFFLINE=1 .venv/bin/ngr bench learning --dataset $(BENCH_DATA)/musique_train200 --json > .ngr/results/learning.json
	for r in iproute2 mypy-paths-only; do \
	  [ -d .ngr/history/$$r ] || git clone -q $(BENCH_DATA)/history/$$r.bundle .ngr/history/$$r || exit 1; \
	  HF_HUB_OFFLINE=1 .venv/bin/ngr bench history --repo .ngr/history/$$r --out .ngr/results/history-$$r.json || exit 1; \
	done
	HF_HUB_OFFLINE=1 .venv/bin/ngr bench perf --nodes 10000 --json > .ngr/results/perf-10k.json
	HF_HUB_OFFLINE=1 .venv/bin/ngr bench perf --nodes 100000 --json > .ngr/results/perf-100k.json
	HF_HUB_OFFLINE=1 .venv/bin/ngr bench perf --peers --json > .ngr/results/peers.json
