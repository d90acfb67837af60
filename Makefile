# The README's two commands:
#   make       set up .venv if needed, Verilog + lint + a demo simulation of every block, summary table
#   make test  set up .venv if needed, the full regression (golden + RTL + flow) on 2 workers
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.gpublocks-installed

.PHONY: all test clean

all: $(STAMP)
	$(BIN)/python -m scripts.demo

test: $(STAMP)
	@$(BIN)/python -m pytest -n 2 --junitxml=build/reports/junit.xml; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5): failing"; fi; \
	exit $$rc

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

clean:
	rm -rf build
