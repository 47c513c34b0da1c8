# Thin wrapper over CMake/CTest. `make run` and `make test` are the README's two commands.
# Each builds only what it runs: `run` the CLI, `test` the CLI and the tests, `bench` the benchmarks.
BUILD ?= build
JOBS  ?= $(shell nproc)
WERROR ?= $(if $(CI),ON,OFF)

.PHONY: setup configure build run test bench bench-smoke clean

setup:
	bash scripts/setup

configure: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVRAMCALC_WERROR=$(WERROR)

# Everything: the CLI, the tests and the benchmarks.
build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: configure
	cmake --build $(BUILD) -j $(JOBS) --target vramcalc
	./$(BUILD)/vramcalc estimate kimi-k3.1-pro --context 1M

test: configure
	cmake --build $(BUILD) -j $(JOBS) --target vramcalc vramcalc_tests
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target vramcalc_bench
	./$(BUILD)/vramcalc_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# One short iteration of every benchmark: CI checks they build and run, not their speed.
bench-smoke: configure
	cmake --build $(BUILD) -j $(JOBS) --target vramcalc_bench
	./$(BUILD)/vramcalc_bench --benchmark_min_time=0.001

clean:
	rm -rf $(BUILD)
