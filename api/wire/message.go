package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Control is the ws text message that announces one object. When FQN is
// empty, one binary message with the object's bytes follows it.
type Control struct {
	Object string `json:"object"`
	Args   string `json:"args,omitempty"`
	FQN    string `json:"fqn,omitempty"`
}

// ErrorMessage is the ws text message that answers an object whose
// transformation failed; the connection stays usable for the next object.
type ErrorMessage struct {
	Error string `json:"error"`
}

// MarshalControl encodes c as a ws control message.
func MarshalControl(c Control) ([]byte, error) {
	return json.Marshal(c)
}

// ParseControl decodes a ws control message. A message that is not a JSON
// object is a protocol error; whether the object name is present is checked
// by the receiver, which can answer that with an ErrorMessage.
func ParseControl(data []byte) (Control, error) {
	var c Control
	if err := json.Unmarshal(data, &c); err != nil {
		return Control{}, fmt.Errorf("ws control message: %w", err)
	}
	return c, nil
}

// MarshalError encodes msg as a ws error message.
func MarshalError(msg string) []byte {
	// Marshalling a struct with one string field cannot fail.
	b, _ := json.Marshal(ErrorMessage{Error: msg})
	return b
}

// ParseError decodes a ws error message and returns its text.
func ParseError(data []byte) (string, error) {
	var m ErrorMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("ws error message: %w", err)
	}
	if m.Error == "" {
		return "", errors.New(`ws error message without "error"`)
	}
	return m.Error, nil
}
