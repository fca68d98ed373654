# `make bench` (docs/design.md §9): boot-time figures for pmuos beside a do-nothing
# baseline kernel booted the same way. Included by the top-level Makefile
# (BUILD, CC, PYTHON come from there).

.PHONY: bench

$(BUILD)/bench/null.mb: bench/null_kernel.S bench/null.ld
	@mkdir -p $(dir $@)
	$(CC) -m32 -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-T,bench/null.ld $< -o $@

bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/kernel.mb $(BUILD)/bench/null.mb $(BUILD)/pmuctl $(PLUGIN_SO)
	$(PYTHON) bench/boot.py
	$(PYTHON) bench/pmi.py
	$(PYTHON) bench/tasks.py
	$(PYTHON) bench/mailbox.py
	$(PYTHON) bench/startup.py
	$(PYTHON) bench/drain.py
	$(PYTHON) bench/plugin.py
