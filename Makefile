# Thin wrapper over CMake/CTest. `make run` and `make test` are the README's two commands.
BUILD ?= build
JOBS  ?= $(shell nproc)
WERROR ?= $(if $(CI),ON,OFF)

.PHONY: setup configure build run test bench bench-smoke clean

setup:
	bash scripts/setup

configure: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVRAMCALC_WERROR=$(WERROR)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/vramcalc estimate kimi-k3.1-pro --context 1M

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/vramcalc_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# One short iteration of every benchmark: CI checks they build and run, not their speed.
bench-smoke: build
	./$(BUILD)/vramcalc_bench --benchmark_min_time=0.001

clean:
	rm -rf $(BUILD)
