// The request task's async frames in one slab (issue 15, allocations).
//
// A task allocates the frames of the async functions it runs from its own stack allocator: a
// first slab inside the task's allocation, then slabs it mallocs as the frames need them, each
// at least about 1 KB and sized to the frame that did not fit. It keeps them until the task ends
// and reuses a free one only while the next frame fits in it. The pipeline's frames are several
// KB each (`Request.runOnce` and the exchange hold `HTTPRequest`, `Endpoint`, `HTTPResponse`…
// across their awaits), so each deeper call and each larger frame than the free slab after the
// current one mallocs again: about 18 slabs per small GET, all freed with the task.
//
// Calling `reserveTaskFrames()` first in the request's task allocates one frame as large as the
// pipeline's deepest path and returns at once: its slab stays with the task, free, and every
// frame after it fits there. Two mallocs instead of 18: the reserve's slab, and a small one for
// the frame of the call that keeps the reserve alive across a suspension point (the reserve's
// slab is exactly its frame's size); see Benchmarks/README.md, "Finding allocations". Nothing
// depends on it but that count: a path deeper than the reserve (a cache revalidation, an
// adapter's own frames) gets further slabs as it would without it.

/// The frame bytes a request's task needs at its deepest on a small GET (`Request.run` down to
/// the HTTP/1 exchange and the response's step), with a little room. In a release build the
/// pipeline's frames there are (read from their async function pointers) `run` 1.6 KB, `runOnce`
/// 5.4, the exchange's dispatch 3.6 and the collected exchange with `performHTTP1` inlined 5.6
/// (12 KB until the attempt's result stopped passing through its frame), plus the hand-off's
/// closure 0.6; part of the chain fits in the slabs the task has before the reserve's.
/// `Bluebonnet:GET:Small`'s malloc count (scripts/allocations.sh) is 29 at p50 with 14, 15 or 16
/// KiB and 32 with 12. Each request in flight holds this much while its pipeline runs, so it is
/// no larger than needed; a frame that grows on this path shows in the gate. A request whose first
/// exchange `resume()` began (`Request.beginFirstHop()`: no interceptor, cache or body) reserves it
/// only once that exchange ended, so while it waits for a connection it holds a task of a few
/// hundred bytes, not this (3.75 MiB at 256 in flight before). It was 40 KiB while `runOnce` held
/// 11–12.5 KB of temporaries in its frame, then 22 KiB.
typealias TaskFrameReserve = InlineArray<15360, UInt8>

/// Allocates a frame of `TaskFrameReserve`'s size in the current task and gives it back, so that
/// the task's stack allocator keeps one free slab that large for the frames that follow. Only the
/// reserve's optional tag is written: the slab's bytes are not touched.
@inline(never)
func reserveTaskFrames() async {
    var reserve: TaskFrameReserve? = nil
    // The reserve's address goes to a function the optimizer cannot see into, before and after a
    // call that could suspend: that keeps it in this function's async frame.
    withUnsafeMutableBytes(of: &reserve) { opaqueFrameSlot($0.baseAddress) }
    await frameReserveBoundary()
    withUnsafeMutableBytes(of: &reserve) { opaqueFrameSlot($0.baseAddress) }
}

@inline(never) @_optimize(none)
private func opaqueFrameSlot(_ slot: UnsafeMutableRawPointer?) {}

@inline(never) @_optimize(none)
private func frameReserveBoundary() async {}
