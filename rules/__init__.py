"""Pure game arithmetic for HITOS, the Vaesen-style d6 pool and Hora de Aventuras.

Nothing in this package imports Django. Randomness enters only through a
:class:`rules.dice.DiceSource` passed in by the caller.
"""
