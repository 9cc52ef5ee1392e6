package notify_test

import (
	"testing"

	"github.com/wnms/wnms/internal/notify"
	"github.com/wnms/wnms/internal/wnms"
)

// The Standard Webhooks specification's published test vector (its
// libraries' signing tests): a whsec_ secret, a message id, a timestamp
// and a payload, and the webhook-signature they give.
func TestStandardSignatureVector(t *testing.T) {
	key, err := wnms.StandardWebhookKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := notify.StandardSignature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("webhook-signature %s, want %s", got, want)
	}
}
