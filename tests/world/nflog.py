#!/usr/bin/env python3
"""Reads a pcap of DLT_NFLOG (tcpdump -i nflog:GROUP -w FILE) and prints one JSON line per logged
packet: the log prefix, address family, destination, protocol and destination port. Stdlib only:
the format is the pcap record header, then NFLOG's 4-byte header and its TLVs (NFULA_PREFIX = 10,
NFULA_PAYLOAD = 9, lengths and types in host order, values padded to 4 bytes)."""
import ipaddress
import json
import struct
import sys

DLT_NFLOG = 239


def parse_ip(payload):
    if not payload:
        return None, None, None, None
    version = payload[0] >> 4
    if version == 4:
        ihl = (payload[0] & 0xF) * 4
        proto = payload[9]
        dst = str(ipaddress.IPv4Address(payload[16:20]))
        l4 = payload[ihl:]
        return 4, dst, proto, l4
    if version == 6:
        proto = payload[6]
        dst = str(ipaddress.IPv6Address(payload[24:40]))
        return 6, dst, proto, payload[40:]
    return None, None, None, None


def main(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype != DLT_NFLOG:
        sys.exit("not an NFLOG capture (linktype %d)" % linktype)
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        rec = data[off + 16:off + 16 + incl]
        off += 16 + incl
        pos, prefix, payload = 4, "", b""
        while pos + 4 <= len(rec):
            tlen, ttype = struct.unpack("<HH", rec[pos:pos + 4])
            if tlen < 4:
                break
            value = rec[pos + 4:pos + tlen]
            if ttype == 10:
                prefix = value.rstrip(b"\0").decode(errors="replace")
            elif ttype == 9:
                payload = value
            pos += (tlen + 3) & ~3
        fam, dst, proto, l4 = parse_ip(payload)
        dport = struct.unpack(">H", l4[2:4])[0] if proto in (6, 17) and len(l4) >= 4 else None
        print(json.dumps({"prefix": prefix, "family": fam, "dst": dst, "proto": proto,
                          "dport": dport}))


if __name__ == "__main__":
    main(sys.argv[1])
