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
/// the HTTP/1 exchange and the response's step), with a little room: in a release build the
/// pipeline's frames there add up to about 13 KB (`runOnce` 3.4, the exchange's dispatch 3.3, the
/// collected exchange with `performHTTP1` inlined 5.6, the hand-off's closure 0.6), plus what the
/// task allocates besides them. `Bluebonnet:GET:Small`'s malloc count (scripts/allocations.sh)
/// is the same with 20 KiB as with 40, one more at 18 KiB and three more at 16. Each request in
/// flight holds this much while it runs (5.5 MiB at 256), so it is no larger than needed; a frame
/// that grows on this path shows in the gate. It was 40 KiB while `runOnce` held 11–12.5 KB of
/// temporaries in its frame.
typealias TaskFrameReserve = InlineArray<22528, UInt8>

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
