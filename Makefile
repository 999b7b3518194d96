# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: run test test-slow lint protos bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(STAMP_RUN)

run: $(STAMP_RUN)
	$(BIN)/tfrview $(ARGS)

lint: $(STAMP_TEST)
	$(BIN)/ruff check tfrview tests bench
	$(BIN)/ruff format --check tfrview tests bench
	$(BIN)/lint-imports

test: $(STAMP_TEST)
	bash tests/setup_system.sh
	$(BIN)/ruff check tfrview tests bench
	$(BIN)/ruff format --check tfrview tests bench
	$(BIN)/lint-imports
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -n auto

# The tests marked slow (kept out of make test's five minutes).
test-slow: $(STAMP_TEST)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -n auto -m slow

# Regenerates the committed *_pb2.py modules from our .proto files.
TFDV_PROTOS := path.proto schema.proto statistics.proto anomalies.proto
protos: | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. \
		$(addprefix tfrview/core/records/proto/,example.proto tensor.proto string_int_label_map.proto event.proto)
	$(BIN)/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. \
		$(addprefix tfrview/core/tfdv/proto/,$(TFDV_PROTOS))
	$(BIN)/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. \
		tfrview/core/arrayrecord/proto/records_metadata.proto
	# TensorFlow Metadata's names, built into our own pool (tfdv/proto/__init__.py says why)
	sed -i 's/_descriptor_pool\.Default()\.AddSerializedFile/_tfdv_pool.AddSerializedFile/; s/^# @@protoc_insertion_point(imports)$$/from tfrview.core.tfdv.proto import POOL as _tfdv_pool\n&/' \
		$(addprefix tfrview/core/tfdv/proto/,$(TFDV_PROTOS:.proto=_pb2.py))

bench: $(STAMP_RUN)
	$(BIN)/python bench/bench_engine.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
