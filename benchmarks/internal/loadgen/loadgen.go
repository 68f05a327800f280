// Package loadgen is the closed-loop load generator: C workers (or, for an async client, C
// calls in flight) each make a call, wait for it, check it and make the next, for a warm-up
// and then a measured phase. It measures the measured phase only: calls, errors, latency
// percentiles (a histogram per worker, no allocation per call), the client process's heap
// allocations (runtime.MemStats) and CPU (getrusage), and the server's CPU (/proc/PID/stat).
package loadgen

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/hist"
	"github.com/tarscomm/tarscomm/benchmarks/internal/peer"
	"github.com/tarscomm/tarscomm/benchmarks/internal/procstat"
	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

// Config configures a run.
type Config struct {
	Client   string // a peer client name: tarscomm, tarscomm-async, tarsgo, grpc, kitex, ...
	Peer     peer.ClientConfig
	C        int           // workers, or calls in flight for an async client
	Duration time.Duration // length of the measured phase; with N, its upper bound
	N        uint64        // if > 0, the measured phase ends after N calls
	Size     int           // payload bytes
	Warmup   time.Duration
	SrvPID   int       // server process whose CPU to measure; 0: none
	Log      io.Writer // where errors and notes go (stderr); nil discards

	// Edge, if not nil, is called right before each edge of the measured phase ("start",
	// "end"), before the client's snapshot and the phase change, on the goroutine that takes
	// them; it may block briefly (the driver reads the server's allocations there).
	Edge func(phase string)
}

// Phases of a run.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// worker holds one worker's (or async slot's) counters; only that worker writes them until
// the run ends. Padded so that workers do not share cache lines.
type worker struct {
	h        hist.Histogram
	calls    uint64
	errs     uint64
	warmErrs uint64
	firstErr error // of the measured phase
	warmErr  error // first of the warm-up
	seq      uint64
	start    time.Time // async: when the call in flight started
	_        [64]byte
}

// run is the state shared by the workers of one run.
type run struct {
	cfg       Config
	phase     atomic.Int32
	remaining atomic.Int64 // with N: calls still to measure
	endOnce   sync.Once
	ended     chan struct{} // closed when the measured phase ends (N reached)
}

// record accounts for one finished call: in the measured phase it counts, otherwise only
// warm-up errors are kept. It returns false once the run is stopping.
func (r *run) record(w *worker, d time.Duration, err error) bool {
	switch r.phase.Load() {
	case phaseMeasure:
		if r.cfg.N > 0 && r.remaining.Add(-1) < 0 {
			return false
		}
		w.calls++
		if err != nil {
			w.errs++
			if w.firstErr == nil {
				w.firstErr = err
			}
		} else {
			w.h.Record(d)
		}
		if r.cfg.N > 0 && r.remaining.Load() == 0 {
			r.endOnce.Do(func() { close(r.ended) })
		}
		return true
	case phaseWarmup:
		if err != nil {
			w.warmErrs++
			if w.warmErr == nil {
				w.warmErr = err
			}
		}
		return true
	}
	return false
}

// snapshot is what the measured phase is the difference of.
type snapshot struct {
	at        time.Time
	mallocs   uint64
	bytes     uint64
	clientCPU time.Duration
	serverCPU time.Duration
	serverOK  bool
}

// liveHeap collects garbage and returns the bytes of live heap objects: unlike HeapInuse at a
// random moment, it does not swing with the GC cycle.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func take(srvPID int, memFirst bool) (snapshot, error) {
	var s snapshot
	var ms runtime.MemStats
	if memFirst {
		runtime.ReadMemStats(&ms)
	}
	var err error
	if s.clientCPU, err = procstat.SelfCPU(); err != nil {
		return s, err
	}
	if srvPID > 0 {
		if s.serverCPU, err = procstat.ProcessCPU(srvPID); err != nil {
			return s, err
		}
		s.serverOK = true
	}
	s.at = time.Now()
	if !memFirst {
		runtime.ReadMemStats(&ms)
	}
	s.mallocs, s.bytes = ms.Mallocs, ms.TotalAlloc
	return s, nil
}

// Run runs one load test and returns its result. Errors of calls are counted in the result,
// not returned; Run fails only if the client cannot be made or measured.
func Run(cfg Config) (result.Result, error) {
	if cfg.C <= 0 || cfg.Size < 0 || cfg.Size > peer.MaxPayload || cfg.Duration <= 0 {
		return result.Result{}, fmt.Errorf("loadgen: need c > 0, 0 <= size <= %d, d > 0 (have %d, %d, %v)",
			peer.MaxPayload, cfg.C, cfg.Size, cfg.Duration)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	cfg.Peer.Concurrency = cfg.C
	cfg.Peer.Payload = cfg.Size
	cl, err := peer.NewClient(cfg.Client, cfg.Peer)
	if err != nil {
		return result.Result{}, err
	}
	defer cl.Close()

	payload := make([]byte, cfg.Size)
	for i := range payload {
		payload[i] = byte(i*7 + 1)
	}
	r := &run{cfg: cfg, ended: make(chan struct{})}
	r.remaining.Store(int64(cfg.N))
	workers := make([]worker, cfg.C)
	var wg sync.WaitGroup
	wg.Add(cfg.C)
	if isAsync(cfg.Client) {
		ac, ok := cl.(peer.AsyncClient)
		if !ok {
			return result.Result{}, fmt.Errorf("loadgen: client %s has no async calls", cfg.Client)
		}
		startAsync(r, ac, workers, payload, &wg)
	} else {
		for i := range workers {
			c := cl.NewCaller(i, payload)
			go r.syncLoop(&workers[i], c, uint64(i)<<40, &wg)
		}
	}

	time.Sleep(cfg.Warmup)
	heapStart := liveHeap() // before the measured phase: its GC is not measured
	edge := cfg.Edge
	if edge == nil {
		edge = func(string) {}
	}
	edge("start")
	start, err := take(cfg.SrvPID, true)
	if err != nil {
		return result.Result{}, err
	}
	r.phase.Store(phaseMeasure)
	timer := time.NewTimer(cfg.Duration)
	select {
	case <-timer.C:
	case <-r.ended:
		timer.Stop()
	}
	edge("end")
	r.phase.Store(phaseStop)
	end, err := take(cfg.SrvPID, false)
	if err != nil {
		return result.Result{}, err
	}
	heapEnd := liveHeap() // after the measured phase, calls still in flight

	// Workers stop after their call in flight, which ends by its timeout at the latest.
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	grace := cfg.Peer.Timeout + 2*time.Second
	select {
	case <-stopped:
	case <-time.After(grace):
		fmt.Fprintf(cfg.Log, "loadgen: some workers still busy %v after the end; reporting anyway\n", grace)
	}
	res := summarize(cfg, workers, start, end)
	res.HeapStartKB, res.HeapEndKB = heapStart>>10, heapEnd>>10
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		res.MaxRSSKB = uint64(ru.Maxrss) // kilobytes on Linux
	}
	return res, nil
}

func isAsync(client string) bool { return client == "tarscomm-async" }

func (r *run) syncLoop(w *worker, c peer.Caller, seq uint64, wg *sync.WaitGroup) {
	defer wg.Done()
	for r.phase.Load() != phaseStop {
		seq++
		t0 := time.Now()
		err := c.Call(seq)
		if !r.record(w, time.Since(t0), err) {
			return
		}
	}
}

// startAsync starts one call per slot; each completion records it and starts the next, on
// the framework's callback goroutine, until the run stops.
func startAsync(r *run, ac peer.AsyncClient, workers []worker, payload []byte, wg *sync.WaitGroup) {
	for i := range workers {
		w := &workers[i]
		w.seq = uint64(i) << 40
		var slot peer.Slot
		var next func()
		done := func(err error) {
			if !r.record(w, time.Since(w.start), err) {
				wg.Done()
				return
			}
			next()
		}
		next = func() {
			for {
				w.seq++
				w.start = time.Now()
				err := slot.Start(w.seq)
				if err == nil {
					return
				}
				// Not sent (queue full, closed): count it, back off, try again.
				if !r.record(w, 0, fmt.Errorf("start: %w", err)) {
					wg.Done()
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
		slot = ac.NewSlot(i, payload, done)
		next()
	}
}

func summarize(cfg Config, workers []worker, start, end snapshot) result.Result {
	var h hist.Histogram
	res := result.Result{FW: cfg.Client, C: cfg.C, Size: cfg.Size}
	var warmErrs uint64
	var firstErr, firstWarm error
	for i := range workers {
		w := &workers[i]
		h.Merge(&w.h)
		res.Calls += w.calls
		res.Errs += w.errs
		warmErrs += w.warmErrs
		if firstErr == nil {
			firstErr = w.firstErr
		}
		if firstWarm == nil {
			firstWarm = w.warmErr
		}
	}
	res.Secs = end.at.Sub(start.at).Seconds()
	us := func(q float64) float64 { return float64(h.Quantile(q)) / 1e3 }
	res.QPS = float64(res.Calls-res.Errs) / res.Secs
	res.P50, res.P90, res.P99, res.P999 = us(0.5), us(0.9), us(0.99), us(0.999)
	res.Max = float64(h.Max()) / 1e3
	n := float64(res.Calls)
	perCall := func(v float64) float64 {
		if n == 0 {
			return math.NaN()
		}
		return v / n
	}
	res.AllocsPerCall = perCall(float64(end.mallocs - start.mallocs))
	res.BytesPerCall = perCall(float64(end.bytes - start.bytes))
	res.ClientCPU = perCall(float64(end.clientCPU-start.clientCPU) / 1e3)
	res.ServerCPU = math.NaN()
	if end.serverOK {
		res.ServerCPU = perCall(float64(end.serverCPU-start.serverCPU) / 1e3)
	}
	if res.Errs > 0 {
		fmt.Fprintf(cfg.Log, "loadgen: %s: %d of %d calls failed in the measured phase; first: %v\n", cfg.Client, res.Errs, res.Calls, firstErr)
	}
	if warmErrs > 0 {
		fmt.Fprintf(cfg.Log, "loadgen: %s: %d calls failed during warm-up; first: %v\n", cfg.Client, warmErrs, firstWarm)
	}
	if res.Calls == 0 {
		fmt.Fprintf(cfg.Log, "loadgen: %s: no call completed in the measured phase\n", cfg.Client)
	}
	return res
}
