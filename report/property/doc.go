// Package property is TARS's custom metrics (properties): named values a program reports, each
// aggregated by one or more policies (Sum, Avg, Distr, Max, Min, Count) and sent every interval
// to the TARS property service (tars.tarsproperty.PropertyObj, interface PropertyF) with
// reportPropMsg, as TarsCpp's PropertyReport does.
//
//	logins := property.New("login", property.Sum(), property.Count(), property.Distr(10, 100, 1000))
//	logins.Report(42) // from any goroutine
//
//	r := property.NewReporter(property.Default, prx, property.Options{ModuleName: "App.Server"})
//	r.Start()
//	defer r.Close()
//
// Values follow TarsCpp: Sum and Count are integers; Avg is sum/count as a decimal with up to
// six decimals, trailing zeros dropped ("195.857143", "1234567"; "0" when nothing was
// reported); Max and Min start at 0 each interval, and Min keeps the least non-zero value (a
// Min of "0" is not sent); Distr(b1, ..., bn) counts each value in the first bound
// greater than it, and one at or above bn in "max" ("b1|n1,...,bn|nn,max|n"). Every interval
// reads and resets them. The head is {moduleName, ip "", propertyName, iPropertyVer 2}, with the
// set when Options.SetDivision gives one (moduleName "<module>.<name><area><group>"); batches
// are split by max-report-size.
//
// A Property is safe for concurrent use: Report takes the property's own mutex, held for a few
// additions. A Registry, and so New on the Default one, returns the existing property for a name
// already created.
package property
