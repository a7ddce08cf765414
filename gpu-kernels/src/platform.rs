//! The one place where the CPU and the GPU builds differ.
//!
//! Everything else in the crate is written once. What lives here:
//! - correctly rounded square root (`sqrt.rn.f32` on the GPU, `sqrtss` on the CPU: both IEEE
//!   correctly rounded, so they agree bit for bit);
//! - the fast-mode transcendental functions: the GPU's approximate instructions
//!   (`lg2.approx.ftz.f32`, `sin.approx.ftz.f32`, `cos.approx.ftz.f32`, `ex2.approx.ftz.f32`,
//!   `sqrt.approx.ftz.f32`) on the GPU and `std` on the CPU. These differ between the builds,
//!   which is why [`crate::Fast`] mode is only reproducible within a tolerance. The `.ftz` forms
//!   flush subnormal inputs and results to zero; without it each instruction carries a
//!   subnormal fix-up (a compare and two predicated operations in SASS). Fast mode's inputs are
//!   never subnormal (`u0 >= 2^-33`), and a subnormal `exp` result is a price below 1e-38 of the
//!   spot;
//! - on the GPU only, thread indexing, warp shuffles and warp barriers (in [`crate::gpu`]'s
//!   private helpers, via this module's `nvptx` items).

/// One PTX instruction `INS dst, src;` on an `f32` register (GPU build only).
#[cfg(target_arch = "nvptx64")]
macro_rules! ptx_unary_f32 {
    ($ins:literal, $x:expr) => {{
        let x: f32 = $x;
        let r: f32;
        // SAFETY: a pure arithmetic instruction on registers; no memory is touched.
        unsafe {
            core::arch::asm!(concat!($ins, " {r}, {x};"), r = out(reg32) r, x = in(reg32) x,
                options(pure, nomem, nostack));
        }
        r
    }};
}

/// Correctly rounded single-precision square root (the same bits on both builds).
#[inline(always)]
pub fn sqrt_f32(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // The IEEE square root instruction itself, rather than `core::intrinsics::sqrtf32`
        // (which lowered to the same instruction but is gone from newer nightlies).
        ptx_unary_f32!("sqrt.rn.f32", x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// Correctly rounded double-precision square root (the same bits on both builds:
/// `sqrt.rn.f64` on the GPU, `sqrtsd` on the CPU).
#[inline(always)]
pub fn sqrt_f64(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f64;
        // SAFETY: a pure arithmetic instruction on registers; no memory is touched.
        unsafe {
            core::arch::asm!("sqrt.rn.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x, options(pure, nomem, nostack));
        }
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// `x as u32` for a finite `x` (truncated toward zero, clamped to `0..=u32::MAX`; callers pass
/// no NaN). On the GPU it is the single instruction `cvt.rzi.u32.f64`, which PTX defines to
/// clamp to the destination's range; LLVM writes Rust's `as` as a dozen compares and selects
/// around that same instruction.
#[inline(always)]
pub fn f64_to_u32(x: f64) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // SAFETY: a pure arithmetic instruction on registers; no memory is touched.
        unsafe {
            core::arch::asm!("cvt.rzi.u32.f64 {r}, {x};", r = out(reg32) r, x = in(reg64) x, options(pure, nomem, nostack));
        }
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x as u32
    }
}

/// `x as u64` (as [`f64_to_u32`]: `cvt.rzi.u64.f64` on the GPU).
#[inline(always)]
pub fn f64_to_u64(x: f64) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u64;
        // SAFETY: a pure arithmetic instruction on registers; no memory is touched.
        unsafe {
            core::arch::asm!("cvt.rzi.u64.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x, options(pure, nomem, nostack));
        }
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x as u64
    }
}

/// The high and low words of the 64-bit product of two `u32` (exact on both builds).
///
/// On the GPU these are the `mul.hi.u32` and `mul.lo.u32` instructions: written as a `u64`
/// product, LLVM kept Philox's unrolled rounds in 64-bit multiplies (`mul.lo.s64`, several
/// 32-bit multiply-adds each on the hardware).
#[inline(always)]
pub fn mul_hi_lo_u32(a: u32, b: u32) -> (u32, u32) {
    #[cfg(target_arch = "nvptx64")]
    {
        let (hi, lo): (u32, u32);
        // SAFETY: pure arithmetic instructions on registers; no memory is touched.
        unsafe {
            core::arch::asm!("mul.hi.u32 {hi}, {a}, {b};", hi = out(reg32) hi, a = in(reg32) a, b = in(reg32) b,
                options(pure, nomem, nostack));
            core::arch::asm!("mul.lo.u32 {lo}, {a}, {b};", lo = out(reg32) lo, a = in(reg32) a, b = in(reg32) b,
                options(pure, nomem, nostack));
        }
        (hi, lo)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let p = (a as u64) * (b as u64);
        ((p >> 32) as u32, p as u32)
    }
}

/// Fast natural logarithm: `lg2.approx.ftz.f32` times ln 2 on the GPU, `f32::ln` on the CPU.
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r = ptx_unary_f32!("lg2.approx.ftz.f32", x);
        r * core::f32::consts::LN_2
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.ln()
    }
}

/// Fast `exp`: `ex2.approx.ftz.f32` of `x * log2(e)` on the GPU, `f32::exp` on the CPU.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y = x * core::f32::consts::LOG2_E;
        let r = ptx_unary_f32!("ex2.approx.ftz.f32", y);
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.exp()
    }
}

/// Fast square root: `sqrt.approx.ftz.f32` on the GPU, `f32::sqrt` on the CPU.
#[inline(always)]
pub fn fast_sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r = ptx_unary_f32!("sqrt.approx.ftz.f32", x);
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// Fast `sqrt(-2 ln u)`, Box-Muller's radius: one `lg2.approx.ftz.f32`, one multiply by
/// `-2 ln 2` and one `sqrt.approx.ftz.f32` on the GPU; `f32` `std` on the CPU.
#[inline(always)]
pub fn fast_box_muller_radius(u: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let l = ptx_unary_f32!("lg2.approx.ftz.f32", u);
        fast_sqrt(l * (-2.0 * core::f32::consts::LN_2))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        (-2.0 * u.ln()).sqrt()
    }
}

/// Fast `(sin θ, cos θ)` for `θ` in radians, `|θ| <= π`: `sin.approx.ftz.f32`/`cos.approx.ftz.f32` on the
/// GPU, `f32::sin_cos` on the CPU.
#[inline(always)]
pub fn fast_sincos(theta: f32) -> (f32, f32) {
    #[cfg(target_arch = "nvptx64")]
    {
        (ptx_unary_f32!("sin.approx.ftz.f32", theta), ptx_unary_f32!("cos.approx.ftz.f32", theta))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        theta.sin_cos()
    }
}

/// Warp-level primitives of the GPU build: lane index, shuffles, the warp barrier and the
/// block's dynamic shared memory. The shuffles and the barrier are NVVM intrinsics, which carry
/// LLVM's `convergent` attribute (inline assembly would not, and LLVM could then move a shuffle
/// across a branch).
#[cfg(target_arch = "nvptx64")]
pub mod nvptx {
    unsafe extern "C" {
        #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
        fn shfl_sync_bfly_i32(mask: u32, value: i32, lane_mask: i32, clamp: i32) -> i32;
        #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
        fn shfl_sync_idx_i32(mask: u32, value: i32, src_lane: i32, clamp: i32) -> i32;
        #[link_name = "llvm.nvvm.bar.warp.sync"]
        fn bar_warp_sync(mask: u32);
        #[link_name = "llvm.nvvm.vote.any.sync"]
        fn vote_any_sync(mask: u32, pred: bool) -> bool;
    }

    /// Whether `pred` holds on any lane of `mask` (`vote.sync.any`).
    ///
    /// # Safety
    /// Every lane of `mask` calls it at the same point with the same `mask`, and the calling
    /// lane is in `mask`.
    #[inline(always)]
    pub unsafe fn vote_any(mask: u32, pred: bool) -> bool {
        // SAFETY: the caller's contract.
        unsafe { vote_any_sync(mask, pred) }
    }

    /// The lanes executing this instruction together (`activemask`): a diagnostic, read where
    /// the warp's iterations are counted (not `pure`: it must stay where it is written).
    #[inline(always)]
    pub fn active_mask() -> u32 {
        let m: u32;
        // SAFETY: reading the active mask has no preconditions.
        unsafe { core::arch::asm!("activemask.b32 {m};", m = out(reg32) m, options(nomem, nostack)) };
        m
    }

    /// The lanes below this one (`%lanemask_lt`).
    #[inline(always)]
    pub fn lanemask_lt() -> u32 {
        let m: u32;
        // SAFETY: reading a special register has no preconditions.
        unsafe { core::arch::asm!("mov.u32 {m}, %lanemask_lt;", m = out(reg32) m, options(pure, nomem, nostack)) };
        m
    }

    // The block's dynamic shared memory, sized at launch (`shared_mem_bytes`). One declaration
    // per module; the warp generator's shared-memory form and the warp-stream fills use it.
    core::arch::global_asm!(".extern .shared .align 16 .b8 warpmc_shared[];");

    /// The thread's lane in its warp. Valid because every launch has `blockDim.x` a multiple of
    /// 32 and uses the x dimension only (the host checks).
    #[inline(always)]
    pub fn lane_id() -> u32 {
        // SAFETY: reading a special register has no preconditions.
        unsafe { core::arch::nvptx::_thread_idx_x() as u32 % 32 }
    }

    /// The thread's warp within its block.
    #[inline(always)]
    pub fn warp_in_block() -> u32 {
        // SAFETY: reading a special register has no preconditions.
        unsafe { core::arch::nvptx::_thread_idx_x() as u32 / 32 }
    }

    /// `value` of lane `src` (`shfl.sync.idx`, full mask).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it at the same point (full mask).
    #[inline(always)]
    pub unsafe fn shfl_idx(value: u32, src: u32) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { shfl_sync_idx_i32(u32::MAX, value as i32, src as i32, 31) as u32 }
    }

    /// `value` of lane `lane ^ lane_mask` (`shfl.sync.bfly`, full mask).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it at the same point (full mask).
    #[inline(always)]
    pub unsafe fn shfl_xor(value: u32, lane_mask: u32) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { shfl_sync_bfly_i32(u32::MAX, value as i32, lane_mask as i32, 31) as u32 }
    }

    /// `__syncwarp()`: every lane's shared-memory accesses before it are visible to every lane
    /// after it (`bar.warp.sync`, full mask).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it at the same point (full mask).
    #[inline(always)]
    pub unsafe fn syncwarp() {
        // SAFETY: the caller's contract.
        unsafe { bar_warp_sync(u32::MAX) }
    }

    /// `__syncthreads()`: every thread of the block waits here, and its shared-memory accesses
    /// before it are visible to every thread of the block after it (`bar.sync 0`, through the
    /// NVVM intrinsic that `core::arch::nvptx` wraps, which is `convergent`).
    ///
    /// # Safety
    /// Every thread of the block reaches it the same number of times.
    #[inline(always)]
    pub unsafe fn syncthreads() {
        // SAFETY: the caller's contract.
        unsafe { core::arch::nvptx::_syncthreads() }
    }

    /// The shared-space address of byte `offset` of the block's dynamic shared memory.
    #[inline(always)]
    pub fn shared_address(offset: u32) -> u32 {
        let base: u32;
        // SAFETY: takes the address of the module's shared array; touches no memory.
        unsafe {
            core::arch::asm!("mov.u32 {r}, warpmc_shared;", r = out(reg32) base, options(pure, nomem, nostack));
        }
        base + offset
    }

    /// The `u32` at shared-space address `address`.
    ///
    /// # Safety
    /// `address` is 4-aligned and inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_load(address: u32) -> u32 {
        let v: u32;
        // SAFETY: the caller's contract. Not `nomem`: it must stay ordered with the barriers.
        unsafe {
            core::arch::asm!("ld.shared.u32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) address, options(nostack));
        }
        v
    }

    /// The four `u32` at shared-space address `address` (one `ld.shared.v4.u32`).
    ///
    /// # Safety
    /// `address` is 16-aligned and its 16 bytes are inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_load_v4(address: u32) -> [u32; 4] {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's contract. Not `nomem`, as `shared_load`.
        unsafe {
            core::arch::asm!(
                "ld.shared.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                p = in(reg32) address,
                options(nostack)
            );
        }
        [a, b, c, d]
    }

    /// Store four `u32` at shared-space address `address` (one `st.shared.v4.u32`).
    ///
    /// # Safety
    /// `address` is 16-aligned and its 16 bytes are inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_store_v4(address: u32, v: [u32; 4]) {
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!(
                "st.shared.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};",
                p = in(reg32) address,
                a = in(reg32) v[0],
                b = in(reg32) v[1],
                c = in(reg32) v[2],
                d = in(reg32) v[3],
                options(nostack)
            );
        }
    }

    /// Store a value of 16 or 32 bytes (a fill's group) at shared-space address `address`, as
    /// 16-byte stores (generic stores through a converted pointer cost an address-space check
    /// each).
    ///
    /// # Safety
    /// `size_of::<T>()` is 16 or 32, `address` is 16-aligned and the bytes are inside the
    /// block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_store_group<T: Copy>(address: u32, value: T) {
        // SAFETY: the caller's contract; `T` is plain data of the size read.
        unsafe {
            if core::mem::size_of::<T>() == 32 {
                let w: [[u32; 4]; 2] = core::mem::transmute_copy(&value);
                shared_store_v4(address, w[0]);
                shared_store_v4(address + 16, w[1]);
            } else {
                shared_store_v4(address, core::mem::transmute_copy(&value));
            }
        }
    }

    /// The value of 16 or 32 bytes at shared-space address `address` (see
    /// [`shared_store_group`]).
    ///
    /// # Safety
    /// As [`shared_store_group`], and the bytes hold a `T`.
    #[inline(always)]
    pub unsafe fn shared_load_group<T: Copy>(address: u32) -> T {
        // SAFETY: the caller's contract.
        unsafe {
            if core::mem::size_of::<T>() == 32 {
                let w = [shared_load_v4(address), shared_load_v4(address + 16)];
                core::mem::transmute_copy(&w)
            } else {
                core::mem::transmute_copy(&shared_load_v4(address))
            }
        }
    }

    /// Store `value` at shared-space address `address`.
    ///
    /// # Safety
    /// `address` is 4-aligned and inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_store(address: u32, value: u32) {
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!("st.shared.u32 [{a}], {v};", a = in(reg32) address, v = in(reg32) value, options(nostack));
        }
    }

    /// The `u64` at shared-space address `address`.
    ///
    /// # Safety
    /// `address` is 8-aligned and inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_load_u64(address: u32) -> u64 {
        let v: u64;
        // SAFETY: the caller's contract. Not `nomem`: it must stay ordered with the barriers.
        unsafe {
            core::arch::asm!("ld.shared.u64 {v}, [{a}];", v = out(reg64) v, a = in(reg32) address, options(nostack));
        }
        v
    }

    /// Store `value` at shared-space address `address`.
    ///
    /// # Safety
    /// `address` is 8-aligned and inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_store_u64(address: u32, value: u64) {
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!("st.shared.u64 [{a}], {v};", a = in(reg32) address, v = in(reg64) value, options(nostack));
        }
    }

    /// Add `value` to the `u32` at shared-space address `address` atomically; the old value.
    /// One native instruction (`ATOMS.ADD`), where the hardware has no 64-bit shared add: PTX's
    /// `atom.shared.add.u64` becomes a compare-and-swap loop, which retries on every conflict.
    ///
    /// # Safety
    /// `address` is 4-aligned and inside the block's dynamic shared memory.
    #[inline(always)]
    pub unsafe fn shared_atomic_add_u32(address: u32, value: u32) -> u32 {
        let old: u32;
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!(
                "atom.shared.add.u32 {o}, [{a}], {v};",
                o = out(reg32) old, a = in(reg32) address, v = in(reg32) value, options(nostack)
            );
        }
        old
    }

    /// Add `value` to the `u64` at global address `p` atomically; the old value.
    ///
    /// # Safety
    /// `p` is an 8-aligned pointer into global memory that the kernel may write.
    #[inline(always)]
    pub unsafe fn global_atomic_add_u64(p: *mut u64, value: u64) -> u64 {
        let old: u64;
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!(
                "atom.global.add.u64 {o}, [{p}], {v};",
                o = out(reg64) old, p = in(reg64) p, v = in(reg64) value, options(nostack)
            );
        }
        old
    }

    /// Set the `u64` at global address `p` to the larger of it and `value`, atomically.
    ///
    /// # Safety
    /// As [`global_atomic_add_u64`].
    #[inline(always)]
    pub unsafe fn global_atomic_max_u64(p: *mut u64, value: u64) {
        let _old: u64;
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!(
                "atom.global.max.u64 {o}, [{p}], {v};",
                o = out(reg64) _old, p = in(reg64) p, v = in(reg64) value, options(nostack)
            );
        }
    }
}
