package communicator

import (
	"fmt"
	"maps"
	"sync"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/internal/call"
	"github.com/tarscomm/tarscomm/protocol/propertyf"
	"github.com/tarscomm/tarscomm/protocol/statf"
	"github.com/tarscomm/tarscomm/report/property"
	"github.com/tarscomm/tarscomm/report/stat"
	"github.com/tarscomm/tarscomm/stats"
)

// reporters are the TARS stat and property reporters a Communicator runs when its configuration
// names the services (keys stat and property).
type reporters struct {
	stat *stat.Reporter
	prop *property.Reporter
}

// startReports starts the reporters the configuration asks for: the stat reporter sends the
// Delta of Stats every report-interval (bFromClient = true), the property reporter the
// properties of property.Default. The services are reached through internal proxies of the
// Communicator (a proxy string with '@', or the locator): their calls run no interceptor and are
// left out of Stats, so the reports do not show in the user's metrics nor report themselves.
func (c *Communicator) startReports() error {
	r := c.cfg.Report
	warn := func(what string) func(error) {
		return func(err error) { c.log.Warn(what+" report failed", zap.Error(err)) }
	}
	set := ""
	if c.cfg.EnableSet {
		set = c.cfg.SetDivision // the heads carry it, as TarsCpp's client's do
	}
	if r.Stat != "" {
		prx := new(statf.StatFProxy)
		if err := c.bind(r.Stat, prx, true); err != nil {
			return fmt.Errorf("communicator: stat = %q: %w", r.Stat, err)
		}
		c.reports.stat = stat.New(func() stats.Snapshot { return c.snapshot(true) }, prx, stat.Options{
			ModuleName: r.ModuleName, FromClient: true, Interval: r.ReportInterval,
			MaxReportSize: r.MaxReportSize, OnError: warn("stat"), SetDivision: set,
			Threads: len(c.threads),
		})
		c.reports.stat.Start()
	}
	if r.Property != "" {
		prx := new(propertyf.PropertyFProxy)
		if err := c.bind(r.Property, prx, true); err != nil {
			return fmt.Errorf("communicator: property = %q: %w", r.Property, err)
		}
		c.reports.prop = property.NewReporter(property.Default, prx, property.Options{
			ModuleName: r.ModuleName, Interval: r.ReportInterval,
			MaxReportSize: r.MaxReportSize, OnError: warn("property"), SetDivision: set,
		})
		c.reports.prop.Start()
	}
	return nil
}

// closeReports stops the reporters, sending what they have left, while the proxies still work:
// the calls of the user's servants end first (ErrClosed), so that the final report counts them.
func (c *Communicator) closeReports() {
	c.reportsOnce.Do(func() {
		// The two final reports go out together: each may wait its report timeout for a
		// service that does not answer, and Close waits for the longer, not for their sum.
		var reports sync.WaitGroup
		defer reports.Wait()
		if c.reports.prop != nil {
			reports.Go(func() { _ = c.reports.prop.Close() })
		}
		if c.reports.stat != nil {
			// The final report counts the calls Close ends: those of the user's servants end
			// first, while the reporters' own proxies still run.
			c.mu.Lock()
			internal := maps.Clone(c.internal)
			c.mu.Unlock()
			user := func(servant string) bool { return !internal[servant] }
			var wg sync.WaitGroup
			for _, t := range c.threads {
				wg.Go(func() { t.FailCalls(user, call.ErrClosed, statsTimeout) })
			}
			wg.Wait()
			_ = c.reports.stat.Close()
		}
	})
}
