package codec

import "strconv"

// Return codes (iRet) of a ResponsePacket. Servers and clients use the
// negative codes for framework errors; any other non-zero value comes from
// the service (TarsGo answers an unknown function or an undecodable body
// with 1 and a ResultDesc).
const (
	RetOK            int32 = 0   // success
	RetServerDecode  int32 = -1  // the server could not decode the request
	RetServerEncode  int32 = -2  // the server could not encode the response
	RetNoFunc        int32 = -3  // no such function
	RetNoServant     int32 = -4  // no such servant
	RetResetGrid     int32 = -5  // the grid (grey release) state must be reset
	RetQueueTimeout  int32 = -6  // the request timed out in the server's queue
	RetInvokeTimeout int32 = -7  // the call timed out
	RetProxyConnect  int32 = -8  // the proxy could not connect
	RetOverload      int32 = -9  // the server is overloaded
	RetNoAdapter     int32 = -10 // no endpoint available for the call
	RetInvalidSet    int32 = -11 // the call's set is invalid
	RetClientDecode  int32 = -12 // the client could not decode the response
	RetSendRequest   int32 = -13 // the request could not be sent
	RetUnknown       int32 = -99 // unknown server error
)

// RetName returns a short description of a return code, such as
// "no such function", for error messages. A code TARS does not define is
// described as "return code N".
func RetName(code int32) string {
	switch code {
	case RetOK:
		return "success"
	case RetServerDecode:
		return "server decode error"
	case RetServerEncode:
		return "server encode error"
	case RetNoFunc:
		return "no such function"
	case RetNoServant:
		return "no such servant"
	case RetResetGrid:
		return "reset grid"
	case RetQueueTimeout:
		return "server queue timeout"
	case RetInvokeTimeout:
		return "invoke timeout"
	case RetProxyConnect:
		return "proxy connect error"
	case RetOverload:
		return "server overload"
	case RetNoAdapter:
		return "no adapter"
	case RetInvalidSet:
		return "invalid set"
	case RetClientDecode:
		return "client decode error"
	case RetSendRequest:
		return "send request error"
	case RetUnknown:
		return "unknown server error"
	}
	return "return code " + strconv.Itoa(int(code))
}
