package objectproxy

import "github.com/tarscomm/tarscomm/adapterproxy"

// SetPush makes sink receive the pushes and connection events of every AdapterProxy of this
// ObjectProxy, present and future (nil: none). It must be called before any call is routed
// here: servantproxy.New does, when it takes the ObjectProxies the Communicator built.
func (o *ObjectProxy) SetPush(sink adapterproxy.PushSink) {
	o.opts.Push = sink
	for _, a := range o.adapters {
		if a != nil {
			a.SetPush(sink)
		}
	}
}
