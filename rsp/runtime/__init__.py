"""The continuous-query runtime and its Python API, the one way in for every surface (the command line,
live input, ``rsp serve``, Spark, notebooks): :class:`Engine` registers queries, loads ontologies, takes
stream elements, closes evaluation instants (each query's :class:`~rsp.runtime.clock.Clock`) and hands
each query's results, values (:class:`Result`), to its subscribers.

>>> engine = Engine()
>>> query = engine.register('''
...     REGISTER QUERY Hot AS
...     SELECT ?room FROM STREAM <http://ex.org/temps> [RANGE 2s STEP 1s]
...     WHERE { ?room <http://ex.org/temp> ?v FILTER(?v > 30) }''')
>>> reading = ("<http://ex.org/r1>", "<http://ex.org/temp>", '"35"^^<http://www.w3.org/2001/XMLSchema#integer>')
>>> engine.push([reading], 500)
>>> engine.close()
>>> [(r.time, r.bindings) for r in query]
[(1000, [{'room': '<http://ex.org/r1>'}])]
"""

from rsp.io.results import Result
from rsp.runtime.clock import Clock
from rsp.runtime.engine import Engine
from rsp.runtime.handle import QueryHandle

__all__ = ["Clock", "Engine", "QueryHandle", "Result"]
