/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdma-core's private provider ABI (symbol version IBVERBS_PRIVATE_34), as
 * the MetaRoCE provider uses it.
 *
 * Why this file exists: Debian ships libibverbs.so with the private
 * IBVERBS_PRIVATE_34 symbols but not the private header (driver.h) that
 * declares them. These declarations are the project's own, written from
 * the measured layouts in tests/abi/layouts/ (rdma-core v44.0 and v56.0,
 * x86_64); tests/abi proves every offset and size of them against the
 * table of the rdma-core version we build against. Anything that is not
 * in that table must not be added here without adding it to the test.
 *
 * What comes from elsewhere:
 *   - the public ibv_* structs and struct verbs_context: <infiniband/verbs.h>
 *   - struct ib_uverbs_async_event_desc / ib_uverbs_comp_event_desc: the
 *     kernel UAPI <rdma/ib_user_verbs.h>, which verbs.h already includes
 *     (so they cannot be redeclared; the test checks them all the same)
 *   - IB_UVERBS_CORE_SUPPORT_*: <infiniband/ib_user_ioctl_verbs.h>
 *
 * MR_RDMA_CORE_MAJOR (44 or 56) is set by the top-level meson.build. The
 * v56 differences (ibv_qp_ex.wr_flush, so verbs_qp grows; ibv_port_attr
 * gains active_speed_ex) come in through the real verbs.h of that version;
 * the asserts at the end pin which one we were compiled against.
 */
#ifndef MR_PABI_H
#define MR_PABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>

#ifndef MR_RDMA_CORE_MAJOR
#error "MR_RDMA_CORE_MAJOR must be defined by the build (44 or 56)"
#endif
#if MR_RDMA_CORE_MAJOR != 44 && MR_RDMA_CORE_MAJOR != 56
#error "unknown rdma-core provider ABI layout (known: 44, 56)"
#endif

/* The version suffix of the registration symbol and of the plugin file
 * name (lib<name>-rdmav34.so). */
#define MR_PABI_VERSION 34

/* ccan's doubly linked list node, as libibverbs embeds it. We never walk
 * these lists; they are libibverbs' own. */
struct mr_pabi_list_node {
	struct mr_pabi_list_node *next;
	struct mr_pabi_list_node *prev;
};

/* --- matching a sysfs device to a provider ------------------------------ */

enum {
	MR_PABI_MATCH_SENTINEL = 0,
	MR_PABI_MATCH_PCI = 1,
	MR_PABI_MATCH_MODALIAS = 2,
	MR_PABI_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind; /* MR_PABI_MATCH_* */
};

/* Bits of verbs_sysfs_dev.flags: which lazily read files were read. */
enum {
	MR_PABI_SYSFS_READ_MODALIAS = 1 << 0,
	MR_PABI_SYSFS_READ_NODE_GUID = 1 << 1,
};

/* One rdma device found in sysfs (or netlink), filled in by libibverbs
 * before the provider's match_device/alloc_device see it. */
struct verbs_sysfs_dev {
	struct mr_pabi_list_node entry;
	void *provider_data; /* the provider's to use */
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX]; /* uverbsN */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX]; /* mr0 */
	char ibdev_path[IBV_SYSFS_PATH_MAX]; /* $SYSFS_PATH/class/... */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx; /* -1 in sysfs mode */
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

/* The provider's entry points, registered once per process. */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table; /* NULL: only match_device */
	const struct verbs_device_ops **static_providers;
	/* Called for every candidate device after the table match, if set. */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	/* cmd_fd belongs to the provider from here on, also on failure. */
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* The provider allocates this (inside its own device struct) in
 * alloc_device; libibverbs fills ops, refcount, sysfs and the ibv_device
 * names afterwards. */
struct verbs_device {
	struct ibv_device device; /* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct mr_pabi_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support; /* IB_UVERBS_CORE_SUPPORT_* */
};

/* --- objects the provider embeds ---------------------------------------- */

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask bits */
enum {
	MR_PABI_QP_XRCD = 1 << 0,
	MR_PABI_QP_EX = 1 << 1,
};

/* verbs_mr.mr_type: libibverbs' dereg path looks at it (a NULL MR or an
 * imported MR is released differently). */
enum mr_pabi_mr_type {
	MR_PABI_MR_TYPE_MR = 0,
	MR_PABI_MR_TYPE_NULL_MR = 1,
	MR_PABI_MR_TYPE_IMPORTED_MR = 2,
	MR_PABI_MR_TYPE_DMABUF_MR = 3,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum mr_pabi_mr_type mr_type;
	int access;
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_flow_action {
	struct ibv_flow_action action;
	uint32_t handle;
	int type; /* enum ibv_flow_action_type in rdma-core: an int */
};

struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

struct verbs_counters {
	struct ibv_counters counters;
	uint32_t handle;
};

/* --- the provider's verbs, copied by verbs_set_ops() into the context ---
 * Every entry may be NULL: verbs_set_ops() only copies the non-NULL ones
 * over libibverbs' defaults (which answer EOPNOTSUPP). Sorted by name, as
 * rdma-core keeps them; the order is the ABI. */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(
		struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(
		struct ibv_context *context,
		struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(
		struct ibv_context *context,
		struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	/* attr_size is the caller's sizeof: 232 from ibv_query_device(). */
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* --- IBVERBS_PRIVATE_34 functions of libibverbs.so ----------------------
 * The plugin links against libibverbs; these resolve at dlopen time. */

/* Add ops to libibverbs' provider list; called from a constructor. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/* calloc(alloc_size) and initialise the verbs_context that sits
 * context_offset bytes into it: takes a device reference, stores cmd_fd,
 * sets async_fd = -1, installs libibverbs' default ops. On failure
 * closes cmd_fd, sets errno and returns NULL. */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Allocate a provider context type P whose verbs_context member is M. */
#define mr_pabi_alloc_context(ibdev, cmd_fd, P, M, driver_id) \
	((P *)_verbs_init_and_alloc_context(                  \
		(ibdev), (cmd_fd), sizeof(P),                 \
		(struct verbs_context *)offsetof(P, M), (driver_id)))

/* Copy the non-NULL entries of ops into the context. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* Undo _verbs_init_and_alloc_context: closes cmd_fd and async_fd (both,
 * if not -1), drops the device reference. Does not free the memory. */
void verbs_uninit_context(struct verbs_context *context);

/* Initialise the library part of a CQ (mutex, cond, counters). */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/* Read <ibdev_path>/<file> into buf (NUL-terminated, trailing newline
 * removed). Returns the length or -1. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* RDMA_DRIVER_UNKNOWN: the driver id we pass; never matched in sysfs mode. */
#define MR_PABI_DRIVER_ID_UNKNOWN 0

/* --- what the layout table proves, pinned at compile time too ----------- */
_Static_assert(offsetof(struct verbs_device, core_support) == 704,
	       "verbs_device layout");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
_Static_assert(sizeof(struct verbs_context_ops) == 608, "verbs_context_ops");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
#if MR_RDMA_CORE_MAJOR >= 56
_Static_assert(sizeof(struct verbs_qp) == 376, "verbs_qp (v56)");
_Static_assert(sizeof(struct ibv_port_attr) == 56, "ibv_port_attr (v56)");
#else
_Static_assert(sizeof(struct verbs_qp) == 368, "verbs_qp (v44)");
_Static_assert(sizeof(struct ibv_port_attr) == 52, "ibv_port_attr (v44)");
#endif

#endif /* MR_PABI_H */
