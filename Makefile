# The two set-up commands of the README.  Each creates .venv and installs what it needs.
.PHONY: demo test bench-slow

demo:
	./scripts/bootstrap.sh
	HF_HUB_OFFLINE=1 .venv/bin/ngr demo --db .ngr/demo.db

test:
	./scripts/bootstrap.sh
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q

bench-slow:
	./scripts/bootstrap.sh
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -m slow
