"""GLSL 3.30 core shaders of the OpenGL viewer.

Shapes are drawn instanced: per vertex a position, normal, texture coordinate and color (a multiplier, white unless
the mesh has per-vertex colors); per instance a model matrix (four column vectors) and two colors. Faces are lit by
one directional light: ``color * (ambient + (1 - ambient) * max(dot(n, sun), 0))``; ``color`` alternates between the
instance's two colors in a checkerboard over the texture coordinates (two squares per unit) and is the first color
where both are equal.
"""

SHAPE_VERTEX = """
#version 330 core
layout (location = 0) in vec3 aPos;
layout (location = 1) in vec3 aNormal;
layout (location = 2) in vec2 aUV;
layout (location = 3) in vec3 aColor;
layout (location = 4) in vec4 aM0;
layout (location = 5) in vec4 aM1;
layout (location = 6) in vec4 aM2;
layout (location = 7) in vec4 aM3;
layout (location = 8) in vec3 aColor1;
layout (location = 9) in vec3 aColor2;

uniform mat4 model;
uniform mat4 view;
uniform mat4 projection;

out vec3 vNormal;
out vec2 vUV;
out vec3 vColor1;
out vec3 vColor2;

void main()
{
    mat4 m = model * mat4(aM0, aM1, aM2, aM3);
    gl_Position = projection * view * m * vec4(aPos, 1.0);
    vNormal = mat3(transpose(inverse(m))) * aNormal;
    vUV = aUV;
    vColor1 = aColor1 * aColor;
    vColor2 = aColor2 * aColor;
}
"""

SHAPE_FRAGMENT = """
#version 330 core
in vec3 vNormal;
in vec2 vUV;
in vec3 vColor1;
in vec3 vColor2;
out vec4 FragColor;

uniform vec3 sunDirection;
uniform float ambient;

void main()
{
    vec3 n = normalize(vNormal);
    if (!gl_FrontFacing) n = -n;
    float light = ambient + (1.0 - ambient) * max(dot(n, sunDirection), 0.0);
    float checker = mod(floor(vUV.x * 2.0) + floor(vUV.y * 2.0), 2.0);
    vec3 color = mix(vColor1, vColor2, checker);
    FragColor = vec4(color * light, 1.0);
}
"""

LINE_VERTEX = """
#version 330 core
layout (location = 0) in vec3 aPos;
uniform mat4 mvp;
void main()
{
    gl_Position = mvp * vec4(aPos, 1.0);
}
"""

LINE_FRAGMENT = """
#version 330 core
uniform vec3 color;
out vec4 FragColor;
void main()
{
    FragColor = vec4(color, 1.0);
}
"""
