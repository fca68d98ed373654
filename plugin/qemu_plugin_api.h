/*
 * The part of QEMU's TCG plugin API (version 1) that pmuos-pmu.so uses.
 * Debian's QEMU 7.2 runs plugins but ships no qemu-plugin.h, so the types
 * and functions are declared here, each as QEMU 7.2's
 * include/qemu/qemu-plugin.h declares it (cited by the name it has there).
 * Only declarations: QEMU's own binary exports the functions
 * (`strings qemu-system-x86_64 | grep qemu_plugin_` lists them).
 */
#ifndef PLUGIN_QEMU_PLUGIN_API_H
#define PLUGIN_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* qemu-plugin.h: QEMU_PLUGIN_EXPORT (default visibility under GCC). */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* qemu-plugin.h: "typedef uint64_t qemu_plugin_id_t" */
typedef uint64_t qemu_plugin_id_t;

/* qemu-plugin.h: QEMU_PLUGIN_VERSION is 1 in QEMU 7.2; a plugin exports the version it was built for. */
#define QEMU_PLUGIN_VERSION 1
extern QEMU_PLUGIN_EXPORT int qemu_plugin_version;

/* qemu-plugin.h: struct qemu_info_t (valid only during qemu_plugin_install). */
typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

/* qemu-plugin.h: qemu_plugin_install(), called once when QEMU loads the plugin; !0 refuses. */
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);

/* qemu-plugin.h: qemu_plugin_udata_cb_t, qemu_plugin_vcpu_udata_cb_t */
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);

/* qemu-plugin.h: opaque handles for a translation block and one of its instructions. */
struct qemu_plugin_tb;
struct qemu_plugin_insn;

/* qemu-plugin.h: enum qemu_plugin_cb_flags, enum qemu_plugin_mem_rw */
enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W,
	QEMU_PLUGIN_MEM_RW,
};

/* qemu-plugin.h: qemu_plugin_vcpu_tb_trans_cb_t, qemu_plugin_register_vcpu_tb_trans_cb() */
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);

/* qemu-plugin.h: qemu_plugin_register_vcpu_insn_exec_cb() (called before the instruction executes) */
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);

/*
 * qemu-plugin.h: enum qemu_plugin_op, qemu_plugin_register_vcpu_insn_exec_inline():
 * QEMU's generated code itself adds imm to the 64-bit word at ptr before
 * the instruction executes (after its exec callbacks), with no call.
 */
enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64,
};
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op, void *ptr,
						uint64_t imm);

/* qemu-plugin.h: qemu_plugin_tb_n_insns(), qemu_plugin_tb_get_insn() */
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);

/* qemu-plugin.h: qemu_plugin_insn_data(), _size(), _vaddr(), _haddr() (host address of the bytes) */
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);

/* qemu-plugin.h: qemu_plugin_meminfo_t and its queries */
typedef uint32_t qemu_plugin_meminfo_t;
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

/* qemu-plugin.h: qemu_plugin_get_hwaddr(), qemu_plugin_hwaddr_is_io(), qemu_plugin_hwaddr_phys_addr() */
struct qemu_plugin_hwaddr;
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

/* qemu-plugin.h: qemu_plugin_vcpu_mem_cb_t, qemu_plugin_register_vcpu_mem_cb() (called after the access) */
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
					  void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);

/* qemu-plugin.h: qemu_plugin_simple_cb_t */
typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);
/*
 * qemu-plugin.h: qemu_plugin_register_flush_cb(): cb runs when QEMU flushes
 * its translation cache (QEMU 7.2 accel/tcg do_tb_flush, with every vCPU
 * stopped: no block translated before it runs again).
 */
void qemu_plugin_register_flush_cb(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb);
/*
 * qemu-plugin.h: qemu_plugin_reset(): later, with every vCPU stopped, QEMU
 * flushes its translation cache (the flush callback runs), unregisters all
 * of the plugin's callbacks, then calls cb.
 */
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb);

/* qemu-plugin.h: qemu_plugin_register_atexit_cb(), qemu_plugin_outs() (QEMU's log, -d plugin) */
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

#endif
