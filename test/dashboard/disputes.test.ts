import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts';
import { uniquePng } from '../helpers/files.ts';
import { fund, inFlightSell, merchantCall, PAY } from '../helpers/orders.ts';
import { addUser, signIn } from './helpers.ts';

/** The dashboard's dispute page says who opened the dispute (buyer or seller) and whether evidence came with it, TH/EN. */
describe('the dashboard dispute page: opened by, evidence', () => {
  let t: TestApp;
  let seller: TestMerchant;
  let buyer: TestMerchant;

  before(async () => {
    t = await startTestApp();
    seller = await t.createMerchant('Dispute seller');
    buyer = await t.createMerchant('Dispute buyer');
    await fund(t, seller.id, 100 * PAY);
    await addUser(t, seller.id, 'owner@dispute-seller.example', 'owner');
    await addUser(t, buyer.id, 'owner@dispute-buyer.example', 'owner');
  });
  after(() => t.close());

  const open = async (jwt: string, sell_order_id: string, extra: Record<string, string> = {}) => {
    const response = await merchantCall(t, jwt, 'POST', '/v1/merchant-disputes', {
      sell_order_id,
      notes: 'the money did not arrive',
      ...extra,
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().data.id as string;
  };
  const pageOf = async (email: string, id: string, lang: 'en' | 'th') => {
    const browser = await signIn(t, email);
    const response = await t.request({
      method: 'GET',
      url: `/dashboard/disputes/${id}`,
      headers: { cookie: `${browser.cookie}; mpay_lang=${lang}` },
    });
    assert.equal(response.statusCode, 200, response.body.slice(0, 300));
    return response.body;
  };

  it("a buyer's dispute with its slip: both parties' pages say the buyer opened it and evidence is attached", async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    const id = await open(buyer.jwt, sell.id, {
      evidence_base64: uniquePng().toString('base64'),
      content_type: 'image/png',
    });
    for (const email of ['owner@dispute-buyer.example', 'owner@dispute-seller.example']) {
      const en = await pageOf(email, id, 'en');
      assert.match(en, /<dt>Opened by<\/dt><dd>The buyer \(a merchant whose buy order filled the sell order\)<\/dd>/);
      assert.match(en, /<dt>Evidence<\/dt><dd>Attached \(<span class="mono">image\/png<\/span>, /);
      const th = await pageOf(email, id, 'th');
      assert.match(th, /<dt>เปิดโดย<\/dt><dd>ผู้ซื้อ /);
      assert.match(th, /<dt>หลักฐาน<\/dt><dd>แนบแล้ว /);
    }
  });

  it("a seller's dispute without evidence: the page says the seller opened it and nothing is attached", async () => {
    const sell = await inFlightSell(t, seller.jwt, buyer.jwt, 2 * PAY);
    const id = await open(seller.jwt, sell.id);
    const en = await pageOf('owner@dispute-seller.example', id, 'en');
    assert.match(en, /<dt>Opened by<\/dt><dd>The seller \(the sell order&#39;s owner\)<\/dd>/);
    assert.match(en, /<dt>Evidence<\/dt><dd>None attached<\/dd>/);
    const th = await pageOf('owner@dispute-seller.example', id, 'th');
    assert.match(th, /<dt>เปิดโดย<\/dt><dd>ผู้ขาย \(เจ้าของคำสั่งขาย\)<\/dd>/);
    assert.match(th, /<dt>หลักฐาน<\/dt><dd>ไม่ได้แนบ<\/dd>/);
  });
});
