"""Our prompt templates for the ATOD-Eval judge metrics (MRA, PE, relevance, coherence).

Written for this project after the paper's Appendix C.3 criteria (Tables 23-25), one
prompt per metric, each asking for JSON only; `judge_metrics` fills and parses them.

Example:
    >>> '{"match": 0 or 1}' in MRA_PROMPT.format(context="", query="", gold="", pred="")
    True
"""

MRA_PROMPT = """You check the goal memory of a task-oriented dialogue system.
Recent dialogue:
{context}
Query: {query}
Reference memory (from the annotation): {gold}
Memory retrieved by the system: {pred}
Score 1 only if the retrieved memory holds what the query needs, its goal status and slot \
values agree in meaning with the reference, and it contradicts nothing.
Answer with JSON only: {{"match": 0 or 1}}"""

PE_PROMPT = """A task-oriented dialogue system raised a goal the user did not mention in \
their latest turn.
Dialogue so far:
{context}
System response: {response}
Tracked goal state: {state}
grounded: 1 if the response is supported by the earlier dialogue and the goal state.
beneficial: 1 if it advances an unresolved goal or gives a timely reminder, without being \
redundant or distracting.
Answer with JSON only: {{"grounded": 0 or 1, "beneficial": 0 or 1}}"""

RELEVANCE_PROMPT = """Rate one response of a task-oriented dialogue system from 1 (poor) to \
5 (excellent): does it address the current request, agree with the tracked goals, and \
read as useful and natural?
Recent dialogue:
{context}
Response: {response}
Tracked goal state: {state}
Answer with JSON only: {{"relevance": <1-5>}}"""

COHERENCE_PROMPT = """Rate the coherence of this whole task-oriented dialogue from 1 (poor) \
to 5 (excellent): is it globally consistent, do interleaved goals progress coherently, and \
is it free of contradictions?
Dialogue:
{dialogue}
Final goal state: {state}
Answer with JSON only: {{"coherence": <1-5>}}"""
