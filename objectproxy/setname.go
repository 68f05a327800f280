package objectproxy

import (
	"fmt"
	"maps"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Set routing marks on the wire (TarsCpp's TARSMESSAGETYPESETNAME and the status key its
// servers check, ServantHandle::checkValidSetInvoke).
const (
	messageSetName = 0x80
	statusSetName  = "STATUS_SETNAME_VALUE"
)

// markSet re-encodes c's frame as a set call: message type bit 0x80 and
// status[STATUS_SETNAME_VALUE] = set. The frame was encoded by the ServantProxy; a set call
// costs one decode and one encode more than another call.
func markSet(c *call.Call, set string) error {
	var p codec.RequestPacket
	if err := codec.DecodeRequest(c.Frame, &p); err != nil {
		return fmt.Errorf("objectproxy: set call: %w", err)
	}
	if p.MessageType&messageSetName != 0 && p.Status[statusSetName] == set {
		return nil // already marked (a parked or retried call)
	}
	p.MessageType |= messageSetName
	st := make(map[string]string, len(p.Status)+1)
	maps.Copy(st, p.Status)
	st[statusSetName] = set
	p.Status = st
	c.Frame = codec.AppendRequest(make([]byte, 0, len(c.Frame)+len(statusSetName)+len(set)+8), &p)
	return nil
}
