// Package bufpool recycles the large byte buffers of big calls: request frames, reply frames
// assembled from many reads, and server reply buffers.
//
// Small buffers live with the objects that use them (a pooled call keeps its frame up to 64
// KiB). A buffer larger than that would pin memory if every pooled object kept one, and would
// cost an allocation of its whole size per call if none did: at 8 MiB per call that is the
// difference between running at memory speed and running the garbage collector. bufpool keeps
// such buffers in size classes, four per doubling, each 8 KiB above its round size so that a
// frame around a round-sized body (1 MiB and its header) fits the class named after the body (a
// buffer is at most a quarter larger than asked for), each class a sync.Pool: idle buffers are
// released by the garbage collector like any pooled object. Because sync.Pool empties at every
// collection, and at megabytes per call collections come every few calls, buffers of a megabyte
// and more are also kept aside from the collector, up to 64 MiB in all. What is kept follows the
// load: every few seconds (at a collection) each class gives back half of the buffers no call
// took since the previous trim, so a size the program stopped using frees its room for the sizes
// in use, and an idle program gives it all back within a few collections (the runtime collects at
// least every two minutes).
//
// Kept buffers are memory the program reuses instead of asking the runtime for: a fresh buffer
// of megabytes is fresh pages, which the kernel faults in one by one as the first copy touches
// them, and heap the collector comes back for sooner.
//
// A buffer may be put back only by its last owner; a buffer handed to user code (the body of a
// raw reply) is the user's and never comes back.
package bufpool
