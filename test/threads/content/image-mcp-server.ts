/**
 * A stateless Streamable HTTP MCP server (the official SDK) on a loopback port with one tool, `chart`,
 * whose result is a text block and a PNG image block: what an MCP tool's image looks like on the wire.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface ImageMcpServer {
  url: string;
  close(): Promise<void>;
}

export async function startImageMcpServer(imageBase64: string): Promise<ImageMcpServer> {
  const http: HttpServer = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const server = new Server({ name: 'charts', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'chart', description: 'draws the chart', inputSchema: { type: 'object', properties: {} } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, () => ({
      content: [
        { type: 'text', text: 'the sales chart' },
        { type: 'image', data: imageBase64, mimeType: 'image/png' },
      ],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close().catch(() => undefined));
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
