"""Spark's hash partitioning of a string column, in Python: which shuffle partition
``DataFrame.repartition(n, "key")`` gives a row, so that a partition's task can place a row Spark could
not key (a line only rsp's parser reads) where Spark puts the rows of the same key.

Spark partitions by ``pmod(murmur3(key, seed 42), n)``, with its own variant of Murmur3 x86 32-bit: the
UTF-8 bytes in little-endian 4-byte words, then each byte left over mixed as a whole (sign-extended)
word, where the reference algorithm packs the tail into one word. ``tests/spark/test_spark_keys.py``
checks it against Spark's ``hash`` on generated strings. The reading step puts a line only rsp's parser
reads in the bucket Spark gives the rows of its key (:mod:`rsp.spark.reasoner`).

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


def _finish(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def spark_hash_long(value: int, seed: int = SEED) -> int:
    """Spark SQL's ``hash`` of a ``long`` (a signed 32-bit integer): its low word, then its high word."""
    value &= 0xFFFFFFFFFFFFFFFF
    h1 = _mix(seed & _MASK, value & _MASK)
    h1 = _mix(h1, value >> 32)
    return _finish(h1, 8)


def bucket_labels(buckets: int, partitions: int) -> list[int]:
    """A ``long`` for each bucket, the i-th in shuffle partition ``i % partitions`` when Spark groups rows
    by it (``pmod(hash(label), partitions)``): the buckets spread over the stateful operator's
    partitions as evenly as they can, where the bucket numbers themselves may share one (0 and 1 both
    hash to partition 1 of 2)."""
    labels: list[int] = []
    value = 0
    for i in range(buckets):
        while spark_hash_long(value) % partitions != i % partitions:
            value += 1
        labels.append(value)
        value += 1
    return labels


def partition_of(key: str, partitions: int) -> int:
    """The shuffle partition of a row keyed ``key`` in ``repartition(partitions, "key")``."""
    return spark_hash(key) % partitions
