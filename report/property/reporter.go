package property

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/protocol/propertyf"
)

// Defaults of Options, TarsCpp's.
const (
	DefaultInterval      = 60 * time.Second
	DefaultMaxReportSize = 1400
	DefaultTimeout       = 5 * time.Second
	propertyVersion      = 2 // iPropertyVer as TarsCpp sends it
)

// Options configure a Reporter. Only ModuleName is required.
type Options struct {
	ModuleName    string        // this process's TARS module, "App.Server" (TARS "modulename")
	Interval      time.Duration // TARS "report-interval"; default DefaultInterval
	MaxReportSize int           // TARS "max-report-size"; default DefaultMaxReportSize
	Timeout       time.Duration // bounds one reportPropMsg; default DefaultTimeout
	OnError       func(error)   // told of each report that failed, if set
	// SetDivision is the process's set ("name.area.group") when set routing is on: a valid one
	// (three parts, name and area not "*") goes into each head as TarsCpp's does: moduleName
	// "<ModuleName>.<name><area><group>" and setName, setArea, setID.
	SetDivision string
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxReportSize <= 0 {
		o.MaxReportSize = DefaultMaxReportSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
}

// Reporter sends a Registry's properties to PropertyF every Interval.
type Reporter struct {
	reg  *Registry
	prx  *propertyf.PropertyFProxy
	opts Options

	mu     sync.Mutex
	unsent []map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody // batches a report Close ended never sent
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	run    sync.Once
	ctx    context.Context // the periodic reports'; Close cancels it, ending one under way
	cancel context.CancelFunc
}

// NewReporter returns a Reporter of reg's properties to prx. It sends nothing until Start or
// Flush.
func NewReporter(reg *Registry, prx *propertyf.PropertyFProxy, o Options) *Reporter {
	o.defaults()
	r := &Reporter{reg: reg, prx: prx, opts: o, stop: make(chan struct{}), done: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Start starts the goroutine that reports every Interval. Calling it again does nothing.
func (r *Reporter) Start() {
	r.run.Do(func() { go r.loop() })
}

func (r *Reporter) loop() {
	defer close(r.done)
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			if err := r.Flush(r.ctx); err != nil && r.opts.OnError != nil {
				r.opts.OnError(err)
			}
		}
	}
}

// Close stops the goroutine, if started, and sends the values of the last interval. It takes at
// most about two Timeouts whatever the property service does: a report under way gives up, and
// the last one has one Timeout in all. Calling it again does nothing.
func (r *Reporter) Close() error {
	var err error
	r.once.Do(func() {
		close(r.stop)
		r.cancel()
		r.run.Do(func() { close(r.done) })
		<-r.done
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
		defer cancel()
		err = r.Flush(ctx)
	})
	return err
}

// Flush takes every property's values (starting a new interval) and sends them at once, one
// reportPropMsg per batch, each within Timeout and ctx. The first batch that gets no answer
// ends the report (the service is not answering: the next would wait as long), and what it and
// the batches after it held is lost; but when ctx was cancelled (Close ending a report under
// way), the batches not sent yet are kept for the next Flush, Close's final one, which sends
// them first. It returns the errors of the batches that failed.
func (r *Reporter) Flush(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	batches := append(r.unsent, Messages(r.reg, r.opts)...)
	r.unsent = nil
	var errs []error
	for i, batch := range batches {
		if errors.Is(ctx.Err(), context.Canceled) {
			// Close cancelled this report before the batch went (a call on an ended ctx is not
			// sent): it and the rest are kept for Close's final report.
			r.unsent = batches[i:]
			errs = append(errs, fmt.Errorf("property: report cancelled before batch %d of %d: %w", i+1, len(batches), ctx.Err()))
			break
		}
		cctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		ret, err := r.prx.ReportPropMsg(cctx, batch)
		cancel()
		if err != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				r.unsent = batches[i+1:] // (batch i may have arrived: not sent again)
			}
			errs = append(errs, fmt.Errorf("property: report of %d properties (batch %d of %d; the rest not sent): %w", len(batch), i+1, len(batches), err))
			break
		}
		if ret != 0 {
			errs = append(errs, fmt.Errorf("property: reportPropMsg of %d properties returned %d", len(batch), ret))
		}
	}
	return errors.Join(errs...)
}

// Messages takes the values of reg's properties (starting a new interval) and builds the
// reportPropMsg maps, split in batches of at most o.MaxReportSize bytes counted as 100 plus the
// lengths of the names and values of each property.
func Messages(reg *Registry, o Options) []map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody {
	o.defaults()
	var out []map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody
	var cur map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody
	size := 0
	base := propertyf.StatPropMsgHead{ModuleName: o.ModuleName, IPropertyVer: propertyVersion}
	if p := strings.Split(o.SetDivision, "."); len(p) == 3 && p[0] != "*" && p[1] != "*" {
		base.ModuleName += "." + p[0] + p[1] + p[2]
		base.SetName, base.SetArea, base.SetID = p[0], p[1], p[2]
	}
	for _, p := range reg.Properties() {
		infos := p.Take()
		h := base
		h.PropertyName = p.name
		b := propertyf.StatPropMsgBody{VInfo: make([]propertyf.StatPropInfo, len(infos))}
		n := 100 + len(h.ModuleName) + len(h.PropertyName) + len(h.SetName) + len(h.SetArea) + len(h.SetID)
		for i, in := range infos {
			b.VInfo[i] = propertyf.StatPropInfo{Policy: in.Policy, Value: in.Value}
			n += len(in.Policy) + len(in.Value)
		}
		if cur != nil && size+n > o.MaxReportSize {
			out = append(out, cur)
			cur = nil
		}
		if cur == nil {
			cur = make(map[propertyf.StatPropMsgHead]propertyf.StatPropMsgBody)
			size = 0
		}
		cur[h] = b
		size += n
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}
