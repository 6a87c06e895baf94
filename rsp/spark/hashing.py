"""Spark's hash partitioning of a string column, in Python: which shuffle partition
``DataFrame.repartition(n, "key")`` gives a row, so that a partition's task can place a row Spark could
not key (a line only rsp's parser reads) where Spark puts the rows of the same key.

Spark partitions by ``pmod(murmur3(key, seed 42), n)``, with its own variant of Murmur3 x86 32-bit: the
UTF-8 bytes in little-endian 4-byte words, then each byte left over mixed as a whole (sign-extended)
word, where the reference algorithm packs the tail into one word. ``tests/spark/test_spark_resident.py``
checks it against Spark's ``hash`` on generated strings. :func:`partitions_of` computes it for a whole
Arrow array of keys in NumPy: the keying tasks pack each partition's rows by it
(``rsp.spark.resident.packed``).

>>> spark_hash("")
142593372
>>> partition_of("<http://ex.org/bus1>", 2) in (0, 1)
True
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF
SEED = 42
"""The seed of Spark's ``hash`` and of its hash partitioning (``Murmur3Hash``)."""


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix(h1: int, k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _MASK
    k1 = (_rotl(k1, 15) * 0x1B873593) & _MASK
    h1 = _rotl(h1 ^ k1, 13)
    return (h1 * 5 + 0xE6546B64) & _MASK


def spark_hash(text: str, seed: int = SEED) -> int:
    """Spark SQL's ``hash(text)`` (a signed 32-bit integer)."""
    data = text.encode("utf-8")
    length = len(data)
    aligned = length - length % 4
    h1 = seed & _MASK
    for i in range(0, aligned, 4):
        h1 = _mix(h1, int.from_bytes(data[i : i + 4], "little"))
    for byte in data[aligned:]:
        h1 = _mix(h1, (byte - 256 if byte > 127 else byte) & _MASK)
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def partition_of(key: str, partitions: int) -> int:
    """The shuffle partition of a row keyed ``key`` in ``repartition(partitions, "key")``."""
    return spark_hash(key) % partitions


_VECTOR_BYTES = 256
"""Keys longer than this (bytes) are hashed one by one (:func:`spark_hash`): the vectorised hash loops
over the words of the longest key it takes."""


def partitions_of(keys, partitions: int):
    """:func:`partition_of` of every string of an Arrow array (no nulls), as a NumPy array of ``int64``:
    Spark's Murmur3 over all the distinct keys at once, word by word in NumPy (keys longer than
    :data:`_VECTOR_BYTES` bytes one by one).

    >>> import pyarrow as pa
    >>> keys = ["<http://ex.org/bus1>", "", "é", "<http://ex.org/bus1>"]
    >>> partitions_of(pa.array(keys), 7).tolist() == [partition_of(k, 7) for k in keys]
    True
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    encoded = pc.dictionary_encode(keys)
    hashes = spark_hashes(encoded.dictionary)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    return np.mod(hashes.astype(np.int64), partitions)[codes]


def spark_hashes(strings):
    """:func:`spark_hash` of every string of an Arrow string array (no nulls), as NumPy ``int32``."""
    import numpy as np
    import pyarrow as pa

    strings = strings.cast(pa.large_string())  # 64-bit offsets whatever came
    count = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)[strings.offset : strings.offset + count + 1]
    data_buffer = strings.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1], offsets[1:] - offsets[:-1]
    data = np.concatenate([data, np.zeros(4, np.uint8)])  # reads past a key's end stay in the buffer
    h = np.full(count, SEED, dtype=np.uint32)
    short = lengths <= _VECTOR_BYTES
    words = np.where(short, lengths // 4, 0)
    c1, c2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)

    def mix(h, k):
        k = k * c1
        k = ((k << np.uint32(15)) | (k >> np.uint32(17))) * c2
        h = h ^ k
        h = (h << np.uint32(13)) | (h >> np.uint32(19))
        return h * np.uint32(5) + np.uint32(0xE6546B64)

    for j in range(int(words.max(initial=0))):
        at = words > j
        place = starts[at] + 4 * j
        word = (data[place].astype(np.uint32) | (data[place + 1].astype(np.uint32) << np.uint32(8))
                | (data[place + 2].astype(np.uint32) << np.uint32(16))
                | (data[place + 3].astype(np.uint32) << np.uint32(24)))  # fmt: skip
        h[at] = mix(h[at], word)
    tails = np.where(short, lengths % 4, 0)
    for j in range(3):
        at = tails > j
        byte = data[starts[at] + 4 * words[at] + j].view(np.int8).astype(np.int32).view(np.uint32)
        h[at] = mix(h[at], byte)
    h ^= lengths.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    hashes = h.view(np.int32)
    for index in np.flatnonzero(~short):
        hashes[index] = spark_hash(strings[int(index)].as_py())
    return hashes
