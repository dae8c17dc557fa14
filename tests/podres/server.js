#!/usr/bin/env node
// Fake kubelet pod-resources v1 gRPC server for gpureclaim's end-to-end tests.
//
// It serves /v1.PodResourcesLister/{List,GetAllocatableResources} on a Unix socket with the real
// gRPC stack (@grpc/grpc-js), so the C client is tested against genuine HTTP/2 framing, gRPC
// trailers and deadline handling rather than against our own idea of them. The answers come
// from a JSON file laid out as {"list": ListPodResourcesResponse, "allocatable":
// AllocatableResourcesResponse} with the proto field names of api.proto.
//
// usage: node server.js SOCKET ANSWER.json [--fail=UNIMPLEMENTED|UNAVAILABLE|...]
//                       [--delay-ms=N] [--fail-allocatable=CODE] [--raw=MODE] [--reload]
// --fail answers List with that status (and no message); --delay-ms holds every answer back,
// to test the client's timeout. --reload reads ANSWER.json again on every call, as a kubelet's
// answer follows the pods that come and go (deploy/demo/kube_node.py rewrites it). Prints "listening SOCKET" on stdout once bound; one line per
// call on stderr with the deadline the client sent (from its grpc-timeout header).
//
// --raw=MODE replaces grpc-js by Node's bare HTTP/2 server to imitate broken servers and
// proxies that a real gRPC stack never produces: no-status (a whole message but no
// grpc-status), truncated, compressed, two-messages, http-503, html.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

function usage(msg) {
    process.stderr.write(`server.js: ${msg}\n` +
        'usage: node server.js SOCKET ANSWER.json [--fail=CODE] [--fail-allocatable=CODE] ' +
        '[--delay-ms=N]\n');
    process.exit(2);
}

const args = process.argv.slice(2);
const positional = args.filter((a) => !a.startsWith('--'));
if (positional.length !== 2)
    usage('need SOCKET and ANSWER.json');
const [socketPath, answerPath] = positional;
const RAW_MODES = ['no-status', 'truncated', 'compressed', 'two-messages', 'http-503', 'html'];
const opts = { fail: null, failAllocatable: null, delayMs: 0, raw: null, reload: false };
for (const a of args.filter((x) => x.startsWith('--'))) {
    const [k, v] = a.slice(2).split('=', 2);
    const code = (name) => {
        if (!(name in grpc.status))
            usage(`unknown status '${name}'`);
        return grpc.status[name];
    };
    if (k === 'fail')
        opts.fail = code(v);
    else if (k === 'fail-allocatable')
        opts.failAllocatable = code(v);
    else if (k === 'delay-ms' && /^[0-9]+$/.test(v || ''))
        opts.delayMs = Number(v);
    else if (k === 'raw' && RAW_MODES.includes(v))
        opts.raw = v;
    else if (k === 'reload' && v === undefined)
        opts.reload = true;
    else
        usage(`unknown option '${a}'`);
}

let answer = JSON.parse(fs.readFileSync(answerPath, 'utf8'));
// With --reload, the file as it is now; a file being replaced (renamed into place) is read
// whole or not at all, and a failed read keeps the last answer.
function current() {
    if (opts.reload) {
        try {
            answer = JSON.parse(fs.readFileSync(answerPath, 'utf8'));
        } catch (e) {
            process.stderr.write(`server.js: keeping the last answer: ${e.message}\n`);
        }
    }
    return answer;
}
const def = protoLoader.loadSync(path.join(__dirname, 'api.proto'), {
    keepCase: true,
    longs: String,
    defaults: false,
});
const v1 = grpc.loadPackageDefinition(def).v1;

function reply(name, call, cb, failCode, body) {
    const deadline = call.getDeadline();
    const ms = deadline instanceof Date ? deadline.getTime() : Number(deadline);
    const left = Number.isFinite(ms) ? `${ms - Date.now()}ms` : 'none';
    process.stderr.write(`${name} deadline=${left}\n`);
    setTimeout(() => {
        if (failCode !== null)
            // '%' and 'é' check that the client percent-decodes grpc-message.
            cb({ code: failCode,
                 details: `${name} refused by test server: 100% fake, état ${failCode}` });
        else
            cb(null, body);
    }, opts.delayMs);
}

// Length-Prefixed-Message: compressed flag, 4-byte big-endian length, message.
function frame(msg, flag) {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt8(flag, 0);
    prefix.writeUInt32BE(msg.length, 1);
    return Buffer.concat([prefix, msg]);
}

function serveRaw() {
    const http2 = require('http2');
    const method = v1.PodResourcesLister.service.List;
    const srv = http2.createServer();
    srv.on('stream', (stream, headers) => {
        process.stderr.write(`${headers[':path']} raw=${opts.raw}\n`);
        stream.resume();
        const msg = method.responseSerialize(answer.list || {});
        const grpcHeaders = { ':status': 200, 'content-type': 'application/grpc' };
        const ok = { 'grpc-status': '0' };
        switch (opts.raw) {
        case 'no-status':
            stream.respond(grpcHeaders);
            stream.end(frame(msg, 0));
            break;
        case 'truncated':
            stream.respond(grpcHeaders, { waitForTrailers: true });
            stream.on('wantTrailers', () => stream.sendTrailers(ok));
            stream.end(frame(msg, 0).subarray(0, 5 + msg.length - 10));
            break;
        case 'compressed':
            stream.respond(grpcHeaders, { waitForTrailers: true });
            stream.on('wantTrailers', () => stream.sendTrailers(ok));
            stream.end(frame(msg, 1));
            break;
        case 'two-messages':
            stream.respond(grpcHeaders, { waitForTrailers: true });
            stream.on('wantTrailers', () => stream.sendTrailers(ok));
            stream.end(Buffer.concat([frame(msg, 0), frame(msg, 0)]));
            break;
        case 'http-503':
            stream.respond({ ':status': 503, 'content-type': 'text/plain' });
            stream.end('kubelet is restarting\n');
            break;
        case 'html':
            stream.respond({ ':status': 200, 'content-type': 'text/html' });
            stream.end('<html>not gRPC</html>\n');
            break;
        }
    });
    srv.listen(socketPath, () => process.stdout.write(`listening ${socketPath}\n`));
    const stopRaw = () => srv.close(() => process.exit(0));
    process.on('SIGTERM', stopRaw);
    process.on('SIGINT', stopRaw);
}

try {
    fs.unlinkSync(socketPath);
} catch (e) {
    if (e.code !== 'ENOENT')
        throw e;
}
function serveGrpc() {
    const server = new grpc.Server();
    server.addService(v1.PodResourcesLister.service, {
        List: (call, cb) => reply('List', call, cb, opts.fail, current().list || {}),
        GetAllocatableResources: (call, cb) => reply('GetAllocatableResources', call, cb,
            opts.failAllocatable, current().allocatable || {}),
        Get: (call, cb) => cb({ code: grpc.status.UNIMPLEMENTED, details: 'Get is not served' }),
    });

    server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => {
        if (err) {
            process.stderr.write(`server.js: cannot listen on '${socketPath}': ${err.message}\n`);
            process.exit(1);
        }
        process.stdout.write(`listening ${socketPath}\n`);
    });

    function stop() {
        server.forceShutdown();
        process.exit(0);
    }
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}

if (opts.raw)
    serveRaw();
else
    serveGrpc();
