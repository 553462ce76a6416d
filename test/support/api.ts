// Drives the Worker through its own fetch handler in workerd, as a client would.
import { exports } from 'cloudflare:workers'
import type { ResourceConfig } from '../../worker/models/resources'

export const BASE = 'http://edgefloor.test'

export interface CallOptions {
  token?: string
  json?: unknown
  body?: BodyInit
  headers?: Record<string, string>
  /** Client address as Cloudflare reports it; a fresh one per call unless given (rate limits are per IP). */
  ip?: string
}

export function randomIp(): string {
  const octet = () => Math.floor(Math.random() * 254) + 1
  return `10.${octet()}.${octet()}.${octet()}`
}

export async function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers = new Headers(options.headers)
  headers.set('cf-connecting-ip', options.ip ?? randomIp())
  if (options.token) headers.set('authorization', `Bearer ${options.token}`)
  let body = options.body
  if (options.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(options.json)
  }
  // The Worker's own answer, redirects included (a fetch would follow them: provider sign-in answers 302).
  return exports.default.fetch(new Request(`${BASE}${path}`, { method, headers, body, redirect: 'manual' }))
}

/** Calls and parses the JSON body, returning both. */
export async function callJson<T = any>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await call(method, path, options)
  const text = await response.text()
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers }
}

/**
 * Calls a Worker built with some settings changed (same real D1, R2, Queues and Durable Objects), for
 * behaviour that depends on configuration.
 */
export async function callWithSettings(
  settings: Partial<Record<keyof Env, string>>,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  return callBuiltApp({ settings }, method, path, options)
}

/** Calls a Worker built with other models and resource routes (e.g. the Posts example). */
export async function callWithResources(
  resources: ResourceConfig,
  method: string,
  path: string,
  options: CallOptions = {},
) {
  const response = await callBuiltApp({ resources }, method, path, options)
  const text = await response.text()
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any, headers: response.headers }
}

/** The Request a call sends: a client address, the bearer token, a JSON body. */
export function requestFor(method: string, path: string, options: CallOptions = {}): Request {
  const headers = new Headers(options.headers)
  headers.set('cf-connecting-ip', options.ip ?? randomIp())
  if (options.token) headers.set('authorization', `Bearer ${options.token}`)
  let body = options.body
  if (options.json !== undefined) {
    headers.set('content-type', 'application/json')
    body = JSON.stringify(options.json)
  }
  return new Request(`${BASE}${path}`, { method, headers, body })
}

async function callBuiltApp(
  build: { settings?: Partial<Record<keyof Env, string>>; resources?: ResourceConfig },
  method: string,
  path: string,
  options: CallOptions,
): Promise<Response> {
  const { createApp } = await import('../../worker/app')
  const { env, createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test')
  const ctx = createExecutionContext()
  const app = createApp({ resources: build.resources })
  const response = await app.fetch(requestFor(method, path, options), { ...env, ...build.settings }, ctx)
  await waitOnExecutionContext(ctx)
  return response
}
