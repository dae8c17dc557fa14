#!/usr/bin/env python3
"""A ServiceAccount token that expires in a few seconds, for tests/e2e/kube_faults.sh.

usage: mint_token.py TOKEN SIGNING_KEY SECONDS

The TokenRequest API refuses a duration under 10 minutes (kubernetes
pkg/apis/authentication/validation/validation.go, MinTokenAgeSec, v1.36.3), and the API
server accepts a token for one more minute after its `exp` (pkg/serviceaccount/claims.go
validates with go-jose's jwt.Claims.Validate, whose DefaultLeeway is one minute:
gopkg.in/go-jose/go-jose.v2 v2.6.3, jwt/validation.go). So the
claims of TOKEN, a real TokenRequest token of the ServiceAccount, are kept as the API server
wrote them (issuer, audience, subject, the ServiceAccount's name and uid) and only the times
are moved: `exp` 60 s before now + SECONDS, so that the server refuses the token about
SECONDS from now; it is signed again (RS256) with the cluster's service-account signing key,
the one the API server signs with. Prints the token.
"""
import base64
import json
import subprocess
import sys
import time


def b64d(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64e(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


token, key, secs = open(sys.argv[1]).read().strip(), sys.argv[2], int(sys.argv[3])
head, payload, _ = token.split(".")
claims = json.loads(b64d(payload))
now = int(time.time())
claims["iat"] = claims["nbf"] = now - 60
claims["exp"] = now - 60 + secs
signing_input = head + "." + b64e(json.dumps(claims, separators=(",", ":")).encode())
sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=signing_input.encode(),
                     capture_output=True, check=True).stdout
print(signing_input + "." + b64e(sig))
