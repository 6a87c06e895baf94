"""How Spark keys a partitioned query's triples: the key of a triple as a Spark SQL expression, from the
query's :class:`rsp.query.translation.partition.KeyPlan` (rsp's own :meth:`KeyPlan.key` decides the
same in Python, for the lines only rsp's parser reads)."""

from __future__ import annotations

from pyspark.sql import Column

from rsp.query.translation.partition import RDF_TYPE, KeyPlan


def key_column(plan: KeyPlan, s: Column, p: Column, o: Column) -> Column:
    """The key of a triple as a Spark SQL expression (null: no pattern can match it), in the order of
    :meth:`KeyPlan.place`: ``rdf:type`` triples by class first, then by predicate."""
    from pyspark.sql import functions as F

    key = None

    def case(condition: Column, place: int) -> None:
        nonlocal key
        value = s if place == 0 else o
        key = F.when(condition, value) if key is None else key.when(condition, value)

    for cls, place in plan.classes:
        case((p == F.lit(RDF_TYPE)) & (o == F.lit(cls)), place)
    for predicate, place in plan.positions:
        case(p == F.lit(predicate), place)
    return F.lit(None).cast("string") if key is None else key
