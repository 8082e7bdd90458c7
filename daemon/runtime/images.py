"""Facts about an image read from its header, without an imaging library."""

from __future__ import annotations


def image_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG or JPEG header (0, 0 if neither)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    index = 2
    while index + 9 < len(data) and data[index] == 0xFF:
        marker, length = data[index + 1], int.from_bytes(data[index + 2 : index + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):  # start of frame: height, then width
            return int.from_bytes(data[index + 7 : index + 9], "big"), int.from_bytes(
                data[index + 5 : index + 7], "big"
            )
        index += 2 + length
    return 0, 0
