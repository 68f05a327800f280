package auth

import (
	"bytes"
	"crypto/cipher"
	"crypto/des"
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// Wire constants of the authentication packet.
const (
	FuncName    = "InnerAuthServer"   // sFuncName of the client's auth request
	MessageType = 0x40                // iMessageType of the auth request and its response
	RequestID   = codec.RequestIDAuth // iRequestId of the auth request, which no call takes
	HashSHA1    = "sha1"              // the only hash method TARS defines
	Success     = "AUTH_SUCC"         // sBuffer of the server's answer to a good request
	// TimeWindow is how far the client's clock may be from the server's.
	TimeWindow = time.Hour
)

// ErrAuth matches, with errors.Is, every failure of TARS authentication: the server refused
// the credentials (it closes the connection), answered something else, or did not answer.
var ErrAuth = errors.New("tars authentication failed")

// Credentials are what a client authenticates with: TarsCpp's accesskey and secretkey.
type Credentials struct {
	AccessKey string
	SecretKey string
}

// State is the outcome of checking an auth request, TarsCpp's AUTH_STATE.
type State int32

// The states of AuthF.tars.
const (
	StateOK             State = 0
	StateProtoErr       State = -100 // not a decodable BasicAuthPackage
	StateWrongObj       State = -101 // the package names another object
	StateWrongAK        State = -102 // unknown access key
	StateWrongTime      State = -103 // the client's clock is more than TimeWindow off
	StateNotSupportHash State = -104 // a hash method other than sha1
	StateDecFail        State = -105 // the signature does not decrypt: probably a wrong secret key
	StateError          State = -106 // the secret does not match
)

var stateNames = map[State]string{
	StateOK: "AUTH_SUCC", StateProtoErr: "AUTH_PROTO_ERR", StateWrongObj: "AUTH_WRONG_OBJ",
	StateWrongAK: "AUTH_WRONG_AK", StateWrongTime: "AUTH_WRONG_TIME",
	StateNotSupportHash: "AUTH_NOT_SUPPORT_ENC", StateDecFail: "AUTH_DEC_FAIL", StateError: "AUTH_ERROR",
}

// String returns TarsCpp's name of s, e.g. "AUTH_WRONG_AK".
func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return "AUTH_STATE(" + strconv.Itoa(int(s)) + ")"
}

// hexSHA1 returns the lowercase hex SHA-1 of b.
func hexSHA1(b []byte) []byte {
	sum := sha1.Sum(b)
	return []byte(hex.EncodeToString(sum[:]))
}

// tripleDES returns the cipher keyed by secret2 and t.
func tripleDES(secret2 []byte, t int64) (cipher.Block, error) {
	tmp := bytes.Clone(secret2)
	var tb [8]byte
	binary.LittleEndian.PutUint64(tb[:], uint64(t))
	for i := range tb {
		tmp[i] |= tb[i]
	}
	sum := md5.Sum(tmp)
	key := []byte(hex.EncodeToString(sum[:]))[:24]
	return des.NewTripleDESCipher(key)
}

// sign returns the signature of secretKey at time t.
func sign(secretKey string, t int64) ([]byte, error) {
	secret1 := hexSHA1([]byte(secretKey))
	c, err := tripleDES(hexSHA1(secret1), t)
	if err != nil {
		return nil, err
	}
	pad := 8 - len(secret1)%8
	in := append(bytes.Clone(secret1), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, len(in))
	for i := 0; i < len(in); i += 8 {
		c.Encrypt(out[i:i+8], in[i:i+8])
	}
	return out, nil
}

// AppendRequest appends the frame of the auth request for servant with cred at time now.
func AppendRequest(b []byte, servant string, cred Credentials, now time.Time) ([]byte, error) {
	t := now.Unix()
	sig, err := sign(cred.SecretKey, t)
	if err != nil {
		return b, err
	}
	var e codec.Encoder
	e.WriteString(1, servant)
	e.WriteString(2, cred.AccessKey)
	e.WriteInt64(3, t)
	e.WriteString(4, HashSHA1)
	e.WriteString(5, string(sig))
	return codec.AppendRequest(b, &codec.RequestPacket{
		Version:     codec.VersionTars,
		PacketType:  codec.PacketNormal,
		MessageType: MessageType,
		RequestID:   RequestID,
		ServantName: servant,
		FuncName:    FuncName,
		Buffer:      e.Buf,
	}), nil
}

// CheckResponse checks the server's answer to the auth request, a whole frame: it must answer
// request id 1 with "AUTH_SUCC" (compared as TarsCpp does, ignoring case). Its error matches
// ErrAuth.
func CheckResponse(frame []byte) error {
	if err := checkResponse(frame); err != nil {
		return fmt.Errorf("%w: %w", ErrAuth, err)
	}
	return nil
}

func checkResponse(frame []byte) error {
	var r codec.ResponsePacket
	if err := codec.DecodeResponse(frame, &r); err != nil {
		return fmt.Errorf("undecodable answer: %w", err)
	}
	if r.RequestID != RequestID || r.Ret != 0 || !strings.EqualFold(string(r.Buffer), Success) {
		return fmt.Errorf("the server answered id %d, code %d, %q %q instead of %s: it may not expect authentication", r.RequestID, r.Ret, r.Buffer, r.ResultDesc, Success)
	}
	return nil
}

// Verify checks the body (sBuffer) of an auth request for servant at time now; secret returns
// the secret key of an access key, false if there is none.
func Verify(body []byte, servant string, secret func(accessKey string) (string, bool), now time.Time) State {
	d := codec.NewDecoder(body)
	obj, err1 := d.ReadString(1, true)
	ak, err2 := d.ReadString(2, true)
	t, err3 := d.ReadInt64(3, true)
	method, err4 := d.ReadString(4, false)
	sig, err5 := d.ReadString(5, false)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return StateProtoErr
	}
	if method == "" {
		method = HashSHA1 // the field's default
	}
	switch sk, ok := secret(ak); {
	case obj != servant:
		return StateWrongObj
	case !ok:
		return StateWrongAK
	case t <= now.Unix()-int64(TimeWindow/time.Second) || t >= now.Unix()+int64(TimeWindow/time.Second):
		return StateWrongTime
	case method != HashSHA1:
		return StateNotSupportHash
	default:
		secret2 := hexSHA1(hexSHA1([]byte(sk)))
		c, err := tripleDES(secret2, t)
		if err != nil || len(sig) == 0 || len(sig)%8 != 0 {
			return StateDecFail
		}
		plain := make([]byte, len(sig))
		for i := 0; i < len(sig); i += 8 {
			c.Decrypt(plain[i:i+8], []byte(sig[i:i+8]))
		}
		pad := int(plain[len(plain)-1])
		if pad < 1 || pad > 8 {
			return StateError // TarsCpp drops a bad padding and compares nothing: a mismatch
		}
		if !bytes.Equal(hexSHA1(plain[:len(plain)-pad]), secret2) {
			return StateError
		}
		return StateOK
	}
}

// AppendResponse appends the frame of the server's answer to a successful auth request req.
func AppendResponse(b []byte, req *codec.RequestPacket) []byte {
	return codec.AppendResponse(b, &codec.ResponsePacket{
		Version:     codec.VersionTars,
		PacketType:  req.PacketType,
		RequestID:   req.RequestID,
		MessageType: req.MessageType,
		Buffer:      []byte(Success),
	})
}

// IsRequest reports whether req is an auth request.
func IsRequest(req *codec.RequestPacket) bool { return req.FuncName == FuncName }
