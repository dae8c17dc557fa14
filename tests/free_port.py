"""Print a free TCP port on 127.0.0.1 for a server that is told its port on the command line.

The port is given back before the server binds it. A port of the kernel's ephemeral range
(ip_local_port_range) could meanwhile be handed to any other socket that binds port 0 or
connects out, so this picks at random below that range, where the kernel hands out nothing,
and checks that nothing holds it now. Two tests picking the same port at once is then the only
collision left (about 1 in 10,000 a pair); tests/lib.sh's start_retrying handles it for the
servers it starts. Used by tests/lib.sh (free_port) and tests/valgrind.sh.
"""
import random
import socket


def main():
    lo = 20000
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            hi = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        hi = 32768
    for _ in range(200):
        port = random.randrange(lo, max(hi, lo + 1000))
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        print(port)
        return
    s = socket.socket()  # the range is full: let the kernel choose
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()


if __name__ == "__main__":
    main()
