package codec

// Packet types (cPacketType).
const (
	// PacketNormal is a call that expects a response.
	PacketNormal int8 = 0
	// PacketOneway is a call the server does not answer.
	PacketOneway int8 = 1
)

// Protocol versions (iVersion). Protobuf and .tars services both use
// VersionTars.
const (
	// VersionTars is the plain TARS protocol.
	VersionTars int16 = 1
	// VersionTupComplex is TUP's older form (TarsJava's VERSION2, TarsNode's
	// "tup-complex"): a UniAttribute whose values carry their type names.
	// Answered as VersionTup is.
	VersionTupComplex int16 = 2
	// VersionTup is TUP: the body is a UniAttribute. TarsGo servers answer a
	// TUP request with a RequestPacket-shaped reply.
	VersionTup int16 = 3
	// VersionXML marks an XML body.
	VersionXML int16 = 4
	// VersionJSON marks a JSON body.
	VersionJSON int16 = 5
)

// Message type bits (iMessageType), combined with OR.
const (
	// MessageNull is a plain call.
	MessageNull int32 = 0x00
	// MessageHash marks a call routed by hash code.
	MessageHash int32 = 0x01
	// MessageGrid marks a grey-release (grid) call.
	MessageGrid int32 = 0x02
	// MessageDyed marks a dyed call; the dye key travels in Status.
	MessageDyed int32 = 0x04
	// MessageSample marks a sampled call.
	MessageSample int32 = 0x08
	// MessageAsync marks an asynchronous call.
	MessageAsync int32 = 0x10
	// MessageSetName marks a call routed by set name.
	MessageSetName int32 = 0x80
	// MessageTrace marks a traced call; the trace key travels in Status.
	MessageTrace int32 = 0x100
)

// Reserved names and values of the protocol.
const (
	// FuncPing is the function name of the keepalive call. TarsGo servers
	// answer it, when sent as PacketNormal with an empty body, with RetOK
	// and an empty Buffer; TarsGo's own client sends it as PacketOneway.
	FuncPing = "tars_ping"
	// PushRequestID is the request id of server-initiated packets.
	PushRequestID int32 = 0
	// ReconnectDesc is the ResultDesc of a push packet (PushRequestID) by
	// which a TarsGo server, shutting down gracefully, asks the client to
	// move to a new connection.
	ReconnectDesc = "_reconnect_"
	// StoppingDesc is the ResultDesc with which a tarscomm server, stopping gracefully,
	// refuses (RetOverload) a request that reached it after its Stop began: the request was not
	// run, so a tarscomm client sends it to another endpoint.
	StoppingDesc = "server is stopping"
)
