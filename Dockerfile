FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY api api
COPY worker worker
COPY shared shared
COPY sunrise sunrise
RUN pip install --no-cache-dir .
EXPOSE 8000
CMD ["sunrise", "api", "--host", "0.0.0.0", "--port", "8000"]
