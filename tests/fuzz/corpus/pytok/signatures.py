def f(x, /, *a, k=1, **kw):
    return f"{x!r:>{k}}" + "\N{BULLET}" + b"\xff".hex()

class C(B, metaclass=M):
    @property
    async def m(self): await g(); yield from h()
