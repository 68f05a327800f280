package objectproxy

import "github.com/tarscomm/tarscomm/adapterproxy"

// SetPush makes sink receive the pushes and connection events of every AdapterProxy of this
// ObjectProxy, present and future (nil: none). Like SetTail, it must be called before any call
// is routed here, by whoever built the ObjectProxy.
func (o *ObjectProxy) SetPush(sink adapterproxy.PushSink) {
	o.opts.Push = sink
	for _, a := range o.adapters {
		if a != nil {
			a.SetPush(sink)
		}
	}
}
