"""Thin OpenGL 3.3 core helpers over ``pyglet.gl``: shader programs, instanced shape buffers, the offscreen frame.

Imported only once pyglet is (``weft.render.opengl.renderer`` imports it on first use).
"""

from __future__ import annotations

import ctypes

import numpy as np
from pyglet import gl

from ..errors import RenderError

VERTEX_FLOATS = 11  # position 3, normal 3, uv 2, color 3
INSTANCE_FLOATS = 22  # matrix 16 (column-major), color1 3, color2 3


def _shader(kind, source: str) -> int:
    sid = gl.glCreateShader(kind)
    src = source.encode()
    buf = ctypes.create_string_buffer(src)
    ptr = ctypes.cast(ctypes.pointer(ctypes.pointer(buf)), ctypes.POINTER(ctypes.POINTER(gl.GLchar)))
    gl.glShaderSource(sid, 1, ptr, None)
    gl.glCompileShader(sid)
    ok = gl.GLint()
    gl.glGetShaderiv(sid, gl.GL_COMPILE_STATUS, ctypes.byref(ok))
    if not ok.value:
        log = ctypes.create_string_buffer(4096)
        gl.glGetShaderInfoLog(sid, 4096, None, log)
        raise RenderError(f"OpenGLRenderer: shader compilation failed: {log.value.decode(errors='replace')}")
    return sid


class Program:
    """A linked vertex + fragment program with cached uniform locations."""

    def __init__(self, vertex: str, fragment: str):
        self.id = gl.glCreateProgram()
        shaders = [_shader(gl.GL_VERTEX_SHADER, vertex), _shader(gl.GL_FRAGMENT_SHADER, fragment)]
        for s in shaders:
            gl.glAttachShader(self.id, s)
        gl.glLinkProgram(self.id)
        for s in shaders:
            gl.glDeleteShader(s)
        ok = gl.GLint()
        gl.glGetProgramiv(self.id, gl.GL_LINK_STATUS, ctypes.byref(ok))
        if not ok.value:
            log = ctypes.create_string_buffer(4096)
            gl.glGetProgramInfoLog(self.id, 4096, None, log)
            raise RenderError(f"OpenGLRenderer: shader link failed: {log.value.decode(errors='replace')}")
        self._loc = {}

    def loc(self, name: str) -> int:
        if name not in self._loc:
            self._loc[name] = gl.glGetUniformLocation(self.id, ctypes.create_string_buffer(name.encode()))
        return self._loc[name]

    def use(self):
        gl.glUseProgram(self.id)

    def mat4(self, name: str, m: np.ndarray):
        data = np.ascontiguousarray(np.asarray(m, dtype=np.float32).T).ravel()  # column-major
        gl.glUniformMatrix4fv(self.loc(name), 1, gl.GL_FALSE, data.ctypes.data_as(ctypes.POINTER(gl.GLfloat)))

    def vec3(self, name: str, v):
        gl.glUniform3f(self.loc(name), *(float(x) for x in v))

    def float(self, name: str, v: float):
        gl.glUniform1f(self.loc(name), float(v))

    def delete(self):
        gl.glDeleteProgram(self.id)


def _buffer_data(target, array: np.ndarray, usage=gl.GL_DYNAMIC_DRAW):
    a = np.ascontiguousarray(array)
    gl.glBufferData(target, a.nbytes, a.ctypes.data_as(ctypes.c_void_p) if a.nbytes else None, usage)


class Drawable:
    """One triangle geometry (vertex and index buffers) with its own per-instance buffer, drawn instanced."""

    def __init__(self, vertices: np.ndarray, indices: np.ndarray):
        self.vao, self.vbo, self.ebo, self.ibo = gl.GLuint(), gl.GLuint(), gl.GLuint(), gl.GLuint()
        gl.glGenVertexArrays(1, self.vao)
        for b in (self.vbo, self.ebo, self.ibo):
            gl.glGenBuffers(1, b)
        gl.glBindVertexArray(self.vao)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        self.vertex_count = 0
        self.set_vertices(vertices)
        stride = VERTEX_FLOATS * 4
        for loc, size, offset in ((0, 3, 0), (1, 3, 3), (2, 2, 6), (3, 3, 8)):
            gl.glVertexAttribPointer(loc, size, gl.GL_FLOAT, gl.GL_FALSE, stride, ctypes.c_void_p(offset * 4))
            gl.glEnableVertexAttribArray(loc)
        gl.glBindBuffer(gl.GL_ELEMENT_ARRAY_BUFFER, self.ebo)
        idx = np.asarray(indices, dtype=np.uint32).ravel()
        _buffer_data(gl.GL_ELEMENT_ARRAY_BUFFER, idx, gl.GL_STATIC_DRAW)
        self.index_count = len(idx)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.ibo)
        stride = INSTANCE_FLOATS * 4
        for loc, size, offset in ((4, 4, 0), (5, 4, 4), (6, 4, 8), (7, 4, 12), (8, 3, 16), (9, 3, 19)):
            gl.glVertexAttribPointer(loc, size, gl.GL_FLOAT, gl.GL_FALSE, stride, ctypes.c_void_p(offset * 4))
            gl.glEnableVertexAttribArray(loc)
            gl.glVertexAttribDivisor(loc, 1)
        gl.glBindVertexArray(0)
        self.instance_count = 0

    def set_vertices(self, vertices: np.ndarray):
        """Replace the vertex rows (8 columns: color white; 11: with per-vertex color)."""
        v = np.asarray(vertices, dtype=np.float32)
        if v.shape[1] == 8:
            v = np.hstack([v, np.ones((len(v), 3), dtype=np.float32)])
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        _buffer_data(gl.GL_ARRAY_BUFFER, v)
        self.vertex_count = len(v)

    def set_instances(self, rows: np.ndarray):
        """Upload the per-instance rows ``(n, INSTANCE_FLOATS)``."""
        rows = np.asarray(rows, dtype=np.float32).reshape(-1, INSTANCE_FLOATS)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.ibo)
        _buffer_data(gl.GL_ARRAY_BUFFER, rows)
        self.instance_count = len(rows)

    def draw(self):
        if self.instance_count and self.index_count:
            gl.glBindVertexArray(self.vao)
            gl.glDrawElementsInstanced(gl.GL_TRIANGLES, self.index_count, gl.GL_UNSIGNED_INT, None,
                                       self.instance_count)
            gl.glBindVertexArray(0)

    def delete(self):
        gl.glDeleteVertexArrays(1, self.vao)
        for b in (self.vbo, self.ebo, self.ibo):
            gl.glDeleteBuffers(1, b)


def instance_rows(matrices: np.ndarray, color1: np.ndarray, color2: np.ndarray) -> np.ndarray:
    """Per-instance rows from matrices ``(n, 4, 4)`` and colors ``(n, 3)``."""
    n = len(matrices)
    rows = np.empty((n, INSTANCE_FLOATS), dtype=np.float32)
    rows[:, :16] = np.transpose(matrices, (0, 2, 1)).reshape(n, 16)
    rows[:, 16:19] = color1
    rows[:, 19:22] = color2
    return rows


class Lines:
    """A static set of line segments (the grid)."""

    def __init__(self, points: np.ndarray):
        self.vao, self.vbo = gl.GLuint(), gl.GLuint()
        gl.glGenVertexArrays(1, self.vao)
        gl.glGenBuffers(1, self.vbo)
        gl.glBindVertexArray(self.vao)
        gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.vbo)
        p = np.asarray(points, dtype=np.float32).reshape(-1, 3)
        _buffer_data(gl.GL_ARRAY_BUFFER, p, gl.GL_STATIC_DRAW)
        gl.glVertexAttribPointer(0, 3, gl.GL_FLOAT, gl.GL_FALSE, 12, ctypes.c_void_p(0))
        gl.glEnableVertexAttribArray(0)
        gl.glBindVertexArray(0)
        self.count = len(p)

    def draw(self):
        gl.glBindVertexArray(self.vao)
        gl.glDrawArrays(gl.GL_LINES, 0, self.count)
        gl.glBindVertexArray(0)

    def delete(self):
        gl.glDeleteVertexArrays(1, self.vao)
        gl.glDeleteBuffers(1, self.vbo)


class Frame:
    """The offscreen framebuffer every frame is drawn into: RGBA8 color and 32-bit float depth."""

    def __init__(self, width: int, height: int):
        self.fbo, self.color, self.depth = gl.GLuint(), gl.GLuint(), gl.GLuint()
        gl.glGenFramebuffers(1, self.fbo)
        gl.glGenRenderbuffers(1, self.color)
        gl.glGenRenderbuffers(1, self.depth)
        self.resize(width, height)

    def resize(self, width: int, height: int):
        self.width, self.height = max(int(width), 1), max(int(height), 1)
        gl.glBindRenderbuffer(gl.GL_RENDERBUFFER, self.color)
        gl.glRenderbufferStorage(gl.GL_RENDERBUFFER, gl.GL_RGBA8, self.width, self.height)
        gl.glBindRenderbuffer(gl.GL_RENDERBUFFER, self.depth)
        gl.glRenderbufferStorage(gl.GL_RENDERBUFFER, gl.GL_DEPTH_COMPONENT32F, self.width, self.height)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self.fbo)
        gl.glFramebufferRenderbuffer(gl.GL_FRAMEBUFFER, gl.GL_COLOR_ATTACHMENT0, gl.GL_RENDERBUFFER, self.color)
        gl.glFramebufferRenderbuffer(gl.GL_FRAMEBUFFER, gl.GL_DEPTH_ATTACHMENT, gl.GL_RENDERBUFFER, self.depth)
        status = gl.glCheckFramebufferStatus(gl.GL_FRAMEBUFFER)
        if status == gl.GL_FRAMEBUFFER_COMPLETE:  # no undefined pixels before the first frame
            gl.glClearColor(0.0, 0.0, 0.0, 1.0)
            gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
        if status != gl.GL_FRAMEBUFFER_COMPLETE:
            raise RenderError(f"OpenGLRenderer: the offscreen framebuffer is incomplete (status {status:#x})")

    def bind(self):
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, self.fbo)

    def read(self, depth: bool) -> np.ndarray:
        """The whole frame, bottom row first: ``(h, w, 3)`` uint8 color or ``(h, w)`` float32 depth in [0, 1]."""
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self.fbo)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        if depth:
            out = np.empty((self.height, self.width), dtype=np.float32)
            gl.glReadPixels(0, 0, self.width, self.height, gl.GL_DEPTH_COMPONENT, gl.GL_FLOAT,
                            out.ctypes.data_as(ctypes.c_void_p))
        else:
            out = np.empty((self.height, self.width, 3), dtype=np.uint8)
            gl.glReadPixels(0, 0, self.width, self.height, gl.GL_RGB, gl.GL_UNSIGNED_BYTE,
                            out.ctypes.data_as(ctypes.c_void_p))
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
        return out

    def blit_to_window(self, width: int, height: int):
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, self.fbo)
        gl.glBindFramebuffer(gl.GL_DRAW_FRAMEBUFFER, 0)
        gl.glBlitFramebuffer(0, 0, self.width, self.height, 0, 0, width, height, gl.GL_COLOR_BUFFER_BIT,
                             gl.GL_NEAREST)
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)

    def delete(self):
        gl.glDeleteFramebuffers(1, self.fbo)
        gl.glDeleteRenderbuffers(1, self.color)
        gl.glDeleteRenderbuffers(1, self.depth)
